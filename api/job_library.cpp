#include "api/job_library.hpp"

#include "api/job_entry.hpp"
#include "runtime/actors/blob/blob_client.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/blob/job_package.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/graph/codec/job_graph_codec.hpp"
#include "runtime/graph/job_graph_generator.hpp"
#include "runtime/streaming/streaming_environment.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <spdlog/logger.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <atomic>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

namespace flint::api {

// The data plane this client side feeds (the library task factory builds its stream tasks).
using namespace flint::streaming;

namespace fs = std::filesystem;

job_library::~job_library() {
  if (handle_ != nullptr)
    ::dlclose(handle_);
}

expected<std::string> job_entry_symbol(const std::string& entry) {
  if (entry.empty() || entry == FLINT_JOB_MAIN_SYMBOL)
    return std::string(FLINT_JOB_MAIN_SYMBOL);
  if (!is_job_entry_name(entry))
    return make_error(errc::invalid_argument,
                      "'" + entry
                        + "' is not a job entry name: a name is letters, digits and '_' "
                          "(FLINT_JOB_NAMED_ENTRY(name, fn))");
  return FLINT_JOB_NAMED_ENTRY_PREFIX + entry;
}

expected<std::shared_ptr<job_library>> load_job_library(const std::string& path,
                                                       const std::string& entry) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return make_error(errc::not_found, "job library " + path + " does not exist");
  if (!fs::is_regular_file(path, ec))
    return make_error(errc::invalid_argument, "job library " + path + " is not a regular file");
  // dlopen searches the library path for a name without a slash; a job library is a file.
  return detail::load_job_library(path, path.find('/') == std::string::npos ? "./" + path : path,
                                  entry);
}

expected<std::shared_ptr<job_library>> detail::load_job_library(const std::string& path,
                                                                const std::string& file,
                                                                const std::string& entry_name) {
  auto symbol = job_entry_symbol(entry_name);
  if (!symbol)
    return symbol.error();
  // RTLD_NOW: a symbol the host does not export fails here, named, not later in a task.
  // RTLD_LOCAL: two jobs' libraries do not see each other's symbols.
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return make_error(
      errc::invalid_argument,
      "cannot load job library " + path + ": " + (why ? why : "unknown dynamic linker error"));
  }
  ::dlerror();
  void* entry = ::dlsym(handle, FLINT_JOB_MAIN_SYMBOL);
  if (entry == nullptr) {
    ::dlclose(handle);
    return make_error(errc::invalid_argument,
                      "job library " + path
                        + " has no entry point: it does not export " FLINT_JOB_MAIN_SYMBOL
                          " (define it with FLINT_JOB_ENTRY)");
  }
  if (*symbol != FLINT_JOB_MAIN_SYMBOL) {
    entry = ::dlsym(handle, symbol->c_str());
    if (entry == nullptr) {
      ::dlclose(handle);
      return make_error(errc::invalid_argument,
                        "job library " + path + " has no entry '" + entry_name
                          + "': it does not export " + *symbol
                          + " (define it with FLINT_JOB_NAMED_ENTRY(" + entry_name + ", fn))");
    }
  }
  auto* abi = reinterpret_cast<std::uint32_t (*)()>(::dlsym(handle, FLINT_JOB_ABI_SYMBOL));
  auto version = abi ? abi() : 0;
  if (version != api::job_abi_version) {
    ::dlclose(handle);
    return make_error(errc::invalid_argument,
                      "job library " + path + " was built for job entry version "
                        + std::to_string(version) + ", this runtime runs version "
                        + std::to_string(api::job_abi_version) + "; rebuild it");
  }
  return std::shared_ptr<job_library>(
    new job_library(path, handle, reinterpret_cast<job_library::entry_fn>(entry)));
}

expected<job_program> build_job_program(const job_library& library,
                                        const std::vector<std::string>& args,
                                        const api::configuration& config, const graph::job_id& id) {
  std::optional<api::stream_execution_environment> env;
  try {
    env.emplace(config);
  } catch (const std::exception& e) {
    return make_error(errc::invalid_argument, std::string("invalid configuration: ") + e.what());
  }
  env->set_job_id(id);
  api::job_context context(*env, args);
  if (library.entry_(&context) != 0)
    return make_error(
      errc::invalid_argument,
      "the entry point of job library " + library.path() + " failed: " + context.error());
  auto stream = env->get_stream_graph(context.job_name());
  if (!stream)
    return stream.error();
  auto job = env->job_graph_of(*stream);
  if (!job)
    return job.error();
  // The stream graph holds the library's operator factories: it keeps the library loaded, and
  // goes before it (members are destroyed in reverse order).
  struct loaded_graph {
    std::shared_ptr<const job_library> library;
    graph::stream_graph graph;
  };
  auto holder =
    std::make_shared<loaded_graph>(loaded_graph{library.shared_from_this(), std::move(*stream)});
  job_program program;
  program.stream = std::shared_ptr<const graph::stream_graph>(holder, &holder->graph);
  program.job = std::make_shared<const graph::job_graph>(std::move(*job));
  return program;
}

namespace {

expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(errc::not_found, "cannot read job library " + path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return make_error(errc::internal, "cannot read job library " + path);
  return bytes;
}

error with_context(const error& e, const std::string& context) {
  return make_error(e.code, context + ": " + e.message);
}

/// The ids and uids of the first operator whose id differs: operators that look alike by name
/// differ by the hash of their uid or of their place in the program.
std::string operator_id_difference(const graph::job_graph& submitted,
                                   const graph::job_graph& rebuilt) {
  auto uid = [](const graph::chained_operator& op) {
    return op.uid ? "uid '" + *op.uid + "'" : std::string("no uid");
  };
  for (std::size_t v = 0; v < submitted.vertices.size() && v < rebuilt.vertices.size(); ++v) {
    const auto& a = submitted.vertices[v].operators;
    const auto& b = rebuilt.vertices[v].operators;
    for (std::size_t o = 0; o < a.size() && o < b.size(); ++o)
      if (a[o].id != b[o].id)
        return "; operator '" + a[o].name + "' was submitted as " + a[o].id.to_string() + " ("
          + uid(a[o]) + ") and rebuilt as " + b[o].id.to_string() + " (" + uid(b[o]) + ")";
  }
  return {};
}

} // namespace

expected<unit> upload_job(caf::actor_system& sys, const caf::actor& blob_server,
                          const std::string& library_path, const std::vector<std::string>& args,
                          const api::configuration& config, graph::job_graph& job,
                          const std::string& entry) {
  auto bytes = read_file(library_path);
  if (!bytes)
    return bytes.error();
  auto key = blob::upload_blob(sys, blob_server, *bytes);
  if (!key)
    return with_context(key.error(),
                        "uploading job library " + library_path + " to the blob server failed");
  blob::job_package package;
  package.library_key = *key;
  package.library_name = fs::path(library_path).filename().string();
  package.entry = entry == FLINT_JOB_MAIN_SYMBOL ? std::string{} : entry;
  package.args = args;
  for (const auto& [k, v] : config)
    package.config.emplace(k, v);
  package.job_graph = graph::encode_job_graph(job);
  auto encoded = blob::encode_job_package(package);
  auto stored = blob::upload_job_package(sys, blob_server, job.job_id.to_string(),
                                         {encoded.data(), encoded.size()});
  if (!stored)
    return with_context(stored.error(),
                        "uploading the package of job " + job.job_id.to_string() + " failed");
  job.code.package = blob::content_key({encoded.data(), encoded.size()});
  job.code.library = std::move(*key);
  return unit{};
}

namespace {

/// What the factories of one TaskExecutor share: the connection to the blob server and the
/// programs of the jobs whose tasks run here.
///
/// A program is held weakly: every stream task of the job holds it, so the job's library stays
/// loaded while the job has a task on this TaskExecutor and is unloaded when the last one is gone
/// (Flink releases a job's user-code class loader when the job leaves the TaskExecutor). A task
/// of the job deployed later (a restart, a later region) loads it again from the cached file.
class library_cache {
public:
  library_cache(caf::actor_system& sys, blob_server_locator locate, caf::actor server,
                fs::path cache_dir)
    : sys_(sys),
      locate_(std::move(locate)),
      server_(std::move(server)),
      cache_dir_(std::move(cache_dir)) {}

  /// The job's program, loading it on first use; callers of one job wait for one load. `code`:
  /// what the task's descriptor says the job's package and library hash to.
  expected<job_program> program(const graph::job_id& id, const graph::job_code_hashes& code) {
    std::shared_ptr<job_slot> slot;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      forget_unused_jobs();
      auto& s = jobs_[id];
      if (!s)
        s = std::make_shared<job_slot>();
      slot = s;
    }
    std::lock_guard<std::mutex> guard{slot->mutex};
    auto stream = slot->stream.lock();
    auto job = slot->job.lock();
    if (stream && job && slot->code != code)
      return make_error(errc::rejected,
                        "a task of job " + id.to_string() + " names package SHA-256 "
                          + code.package + " and library SHA-256 " + code.library
                          + ", but the job's program on this TaskExecutor was loaded from package "
                          + slot->code.package + " and library " + slot->code.library);
    if (stream && job)
      return job_program{std::move(stream), std::move(job)};
    auto loaded = load(id, code);
    if (loaded) {
      slot->stream = loaded->stream;
      slot->job = loaded->job;
      slot->code = code;
    }
    return loaded;
  }

private:
  struct job_slot {
    std::mutex mutex;
    std::weak_ptr<const graph::stream_graph> stream;
    std::weak_ptr<const graph::job_graph> job;
    /// The hashes the loaded program was checked against.
    graph::job_code_hashes code;
  };

  /// Drops the slots of jobs with no task here and no load under way (called under mutex_: a
  /// caller that took a slot holds a second reference to it).
  void forget_unused_jobs() {
    std::erase_if(jobs_, [](const auto& entry) {
      return entry.second.use_count() == 1 && entry.second->stream.expired();
    });
  }

  expected<caf::actor> server() {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!locate_)
      return server_;
    // With HA the JobManager moves: a handle of a former leader's blob server is not used.
    auto where = locate_();
    if (server_ && where == server_at_)
      return server_;
    server_ = caf::actor{};
    if (!where)
      return make_error(errc::unreachable, "no JobManager is known yet (no leader)");
    auto connected = rpc::connect_endpoint(sys_, where->first, where->second, "blob_server");
    if (!connected)
      return connected.error();
    server_ = *connected;
    server_at_ = where;
    return server_;
  }

  void forget_server() {
    std::lock_guard<std::mutex> guard{mutex_};
    if (locate_)
      server_ = caf::actor{};
  }

  expected<std::string> fetch(const std::string& key) {
    auto handle = server();
    if (!handle)
      return handle.error();
    auto bytes = blob::fetch_blob(sys_, *handle, key);
    if (!bytes && (bytes.error().code == errc::unreachable || bytes.error().code == errc::timeout))
      forget_server(); // the next task connects again
    return bytes;
  }

  /// The cache directory: the configured one (made private when missing, refused when it is a
  /// link or another user's), or a private temporary one this cache removes when it goes.
  expected<fs::path> cache_directory() {
    std::lock_guard<std::mutex> guard{mutex_};
    if (cache_dir_.empty()) {
      auto made = make_private_temp_directory("flint-job-libraries-");
      if (!made)
        return make_error(made.error().code,
                          "cannot create the job library cache: " + made.error().message);
      owned_cache_dir_ = owned_directory(*made);
      cache_dir_ = *made;
    }
    if (auto ok = prepare_private_directory(cache_dir_, "the job library cache"); !ok)
      return ok.error();
    return cache_dir_;
  }

  /// The library's file in the cache directory, fetched unless a previous job left it there.
  expected<fs::path> library_file(const blob::job_package& package) {
    auto dir = cache_directory();
    if (!dir)
      return dir.error();
    if (!blob::is_content_key(package.library_key))
      return make_error(errc::malformed_message,
                        "the job package names no library: '" + package.library_key + "'");
    auto path = *dir / (package.library_key + ".so");
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0)
      return path; // checked by hash when it is opened
    auto bytes = fetch(package.library_key);
    if (!bytes)
      return with_context(bytes.error(), "fetching job library " + package.library_name);
    // Written aside and renamed: a loaded library is never overwritten under its reader.
    auto temp = *dir
      / (".incoming-" + package.library_key + "-" + std::to_string(::getpid()) + "-"
         + std::to_string(++temp_counter_));
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
      return make_error(errc::internal, "cannot write job library " + temp.string() + ": "
                                          + std::strerror(errno));
    std::size_t done = 0;
    while (done < bytes->size()) {
      auto n = ::write(fd, bytes->data() + done, bytes->size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += static_cast<std::size_t>(n);
    }
    bool written = ::close(fd) == 0 && done == bytes->size();
    std::error_code ec;
    if (!written) {
      fs::remove(temp, ec);
      return make_error(errc::internal, "cannot write job library " + temp.string());
    }
    fs::rename(temp, path, ec);
    if (ec)
      return make_error(errc::internal,
                        "cannot store job library " + path.string() + ": " + ec.message());
    return path;
  }

  /// Loads the cached library at `path` after hashing it: the file is opened once without
  /// following a link and hashed from that descriptor; the dynamic linker then opens `path`
  /// itself, and the file it mapped must still be the one hashed (same inode, size and change
  /// time), or the library is closed again and refused. The path, not /proc/self/fd/N: the
  /// dynamic linker returns an already loaded library whose name matches, and a descriptor's
  /// number is reused by the next job's library (which then ran the first job's code). The
  /// cache's file names are content keys, so a matching name is the same content.
  expected<std::shared_ptr<job_library>> load_checked(const fs::path& path,
                                                      const graph::job_id& id,
                                                      const std::string& library_hash,
                                                      const std::string& entry) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
      return make_error(errc::rejected, "the cached job library " + path.string() + " of job "
                                          + id.to_string()
                                          + " is a symbolic link; it is not loaded");
    if (fd < 0)
      return make_error(errc::internal, "cannot open the cached job library " + path.string()
                                          + ": " + std::strerror(errno));
    struct closer {
      int fd;
      ~closer() { ::close(fd); }
    } close_after_load{fd};
    auto bytes = read_open_file(fd, path);
    if (!bytes)
      return bytes.error();
    if (auto actual = blob::content_key(*bytes); actual != library_hash)
      return make_error(errc::rejected,
                        "the cached job library " + path.string() + " of job " + id.to_string()
                          + " hashes to SHA-256 " + actual
                          + ", but the job's TaskDeploymentDescriptor names SHA-256 "
                          + library_hash
                          + ": the file was changed after it was fetched; it is not loaded");
    struct stat hashed {};
    if (::fstat(fd, &hashed) != 0)
      return make_error(errc::internal, "cannot stat the cached job library " + path.string()
                                          + ": " + std::strerror(errno));
    auto loaded = detail::load_job_library(path.string(), path.string(), entry);
    if (!loaded)
      return loaded;
    struct stat mapped {};
    if (::lstat(path.c_str(), &mapped) != 0 || mapped.st_dev != hashed.st_dev
        || mapped.st_ino != hashed.st_ino || mapped.st_size != hashed.st_size
        || mapped.st_ctim.tv_sec != hashed.st_ctim.tv_sec
        || mapped.st_ctim.tv_nsec != hashed.st_ctim.tv_nsec)
      return make_error(errc::rejected, "the cached job library " + path.string() + " of job "
                                          + id.to_string()
                                          + " changed while it was loaded; it is not run");
    return loaded;
  }

  expected<job_program> load(const graph::job_id& id, const graph::job_code_hashes& code) {
    auto package_bytes = fetch(blob::job_package_key(id.to_string()));
    if (!package_bytes)
      return with_context(package_bytes.error(), "fetching the package of job " + id.to_string());
    if (code.package.empty() || code.library.empty())
      return make_error(errc::rejected,
                        "the TaskDeploymentDescriptor of job " + id.to_string()
                          + " names no hash of the job's package and library (was the job "
                            "submitted without uploading it?); this TaskExecutor runs only job "
                            "code named by its hash");
    if (auto actual = blob::content_key(*package_bytes); actual != code.package)
      return make_error(errc::rejected,
                        "the package of job " + id.to_string() + " hashes to SHA-256 " + actual
                          + ", but the job's TaskDeploymentDescriptor names SHA-256 "
                          + code.package + ": it is not the package the job was submitted with");
    auto package = blob::decode_job_package({package_bytes->data(), package_bytes->size()});
    if (!package)
      return package.error();
    if (package->library_key != code.library)
      return make_error(errc::rejected,
                        "the package of job " + id.to_string() + " names library SHA-256 "
                          + package->library_key
                          + ", but the job's TaskDeploymentDescriptor names SHA-256 "
                          + code.library);
    auto submitted = graph::decode_job_graph(package->job_graph);
    if (!submitted)
      return with_context(submitted.error(),
                          "the package of job " + id.to_string() + " holds no valid JobGraph");
    auto path = library_file(*package);
    if (!path)
      return path.error();
    auto library = load_checked(*path, id, code.library, package->entry);
    if (!library)
      return library.error();
    api::configuration config;
    for (const auto& [k, v] : package->config)
      config.emplace(k, v);
    auto program = build_job_program(**library, package->args, config, id);
    if (!program)
      return with_context(program.error(),
                          "rebuilding job " + id.to_string() + " from " + package->library_name);
    if (auto same = graph::check_same_program(*submitted, *program->job); !same)
      return make_error(same.error().code,
                        "job library " + package->library_name
                          + " on this TaskExecutor: " + same.error().message
                          + operator_id_difference(*submitted, *program->job));
    make_endpoint_logger("job_library")
      ->info("Loaded job library {} for job {} ({} job vertices).", package->library_name,
             id.to_string(), program->job->vertices.size());
    return program;
  }

  caf::actor_system& sys_;
  blob_server_locator locate_;
  std::mutex mutex_;
  /// Where `server_` was found (with a locator).
  std::optional<std::pair<std::string, std::uint16_t>> server_at_;
  caf::actor server_;
  fs::path cache_dir_;
  /// The cache directory when this cache made it (none was configured).
  owned_directory owned_cache_dir_;
  std::atomic<std::uint64_t> temp_counter_{0};
  std::map<graph::job_id, std::shared_ptr<job_slot>> jobs_;
};

/// A task of a job whose program could not be loaded: fails at its first step with the cause.
class failed_task final : public task_executor::invokable {
public:
  explicit failed_task(error cause) : cause_(std::move(cause)) {}
  expected<bool> step() override { return cause_; }

private:
  error cause_;
};

task_executor::invokable_factory make_factory(std::shared_ptr<library_cache> cache,
                                              streaming_environment& env) {
  return [cache, env = &env](const graph::task_deployment_descriptor& tdd)
           -> std::unique_ptr<task_executor::invokable> {
    auto program = cache->program(tdd.job_id, tdd.code);
    if (!program)
      return std::make_unique<failed_task>(make_error(
        program.error().code,
        "Could not load the program of " + tdd.task_name + ": " + program.error().message));
    // The compiled-in path from here on: one stream task of this program, as the data plane
    // makes it.
    return make_stream_task_factory(std::move(program->stream), std::move(program->job), *env)(tdd);
  };
}

} // namespace

task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming_environment& env,
                                                           std::string blob_host,
                                                           std::uint16_t blob_port,
                                                           std::filesystem::path cache_dir) {
  return make_library_task_factory(
    sys, env,
    [host = std::move(blob_host), blob_port] {
      return std::optional<std::pair<std::string, std::uint16_t>>{{host, blob_port}};
    },
    std::move(cache_dir));
}

task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming_environment& env,
                                                           blob_server_locator locate,
                                                           std::filesystem::path cache_dir) {
  return make_factory(std::make_shared<library_cache>(sys, std::move(locate), caf::actor{},
                                                      std::move(cache_dir)),
                      env);
}

task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming_environment& env,
                                                           caf::actor blob_server,
                                                           std::filesystem::path cache_dir) {
  return make_factory(std::make_shared<library_cache>(sys, nullptr, std::move(blob_server),
                                                      std::move(cache_dir)),
                      env);
}

} // namespace flint::api
