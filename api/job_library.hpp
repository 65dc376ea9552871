#pragma once
/// Jobs shipped as shared libraries (DESIGN.md "Job code", api/job_entry.hpp).
///
/// The client (`flint run`) loads the library, runs its entry point to get the JobGraph
/// (build_job_program) and uploads the library and the job package to the cluster's blob server
/// (upload_job). A TaskExecutor that gets a task of a job it does not know yet fetches the package
/// and the library, loads it, runs the same entry point with the same arguments and configuration,
/// checks the rebuilt JobGraph against the submitted one (graph::check_same_program) and only
/// then makes stream tasks from it, taking each operator by its deterministic id
/// (make_library_task_factory).
///
/// Hosts that load job libraries must export the runtime's symbols: see flint_job_host in
/// cmake/FlintJobs.cmake.

#include "api/stream_execution_environment.hpp"
#include "runtime/actors/task_executor/invokable.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/streaming/stream_task.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <memory>
#include <string>
#include <vector>

namespace flint::streaming {
class streaming_environment;
}

namespace flint::api {

class job_context;
class job_library;

namespace detail {
/// load_job_library, with the dynamic linker given `file` (a /proc/self/fd path, so that the
/// file checked is the file loaded); messages name `path`.
expected<std::shared_ptr<job_library>> load_job_library(const std::string& path,
                                                        const std::string& file,
                                                        const std::string& entry);
} // namespace detail

/// The symbol of entry `entry` (`flint run -c entry`): FLINT_JOB_MAIN_SYMBOL for "" or
/// "flint_job_main", flint_job_entry_<entry> for a plain identifier (FLINT_JOB_NAMED_ENTRY);
/// errc::invalid_argument for anything else.
expected<std::string> job_entry_symbol(const std::string& entry);

/// A loaded job library (Flink's user-code class loader). Programs built from it keep it loaded
/// for as long as their graphs live; it is unloaded when the last of them goes.
class job_library : public std::enable_shared_from_this<job_library> {
public:
  ~job_library();
  job_library(const job_library&) = delete;
  job_library& operator=(const job_library&) = delete;

  /// The file it was loaded from.
  const std::string& path() const noexcept { return path_; }

private:
  friend expected<std::shared_ptr<job_library>> detail::load_job_library(const std::string& path,
                                                                         const std::string& file,
                                                                         const std::string& entry);
  friend expected<streaming::job_program> build_job_program(const job_library& library,
                                                            const std::vector<std::string>& args,
                                                            const api::configuration& config,
                                                            const graph::job_id& id);

  using entry_fn = int (*)(api::job_context*);

  job_library(std::string path, void* handle, entry_fn entry)
    : path_(std::move(path)),
      handle_(handle),
      entry_(entry) {}

  std::string path_;
  void* handle_;
  entry_fn entry_;
};

/// Loads the shared object at `path`, which must export `flint_job_main` (FLINT_JOB_ENTRY) and,
/// for a non-empty `entry`, that named entry (job_entry_symbol).
/// Errors: errc::not_found for a missing file; errc::invalid_argument for a file that is not a
/// loadable shared object (the dynamic linker's message, e.g. an invalid ELF header or an
/// undefined symbol the host does not export), for a library without the entry point, or built
/// against another version of the entry's contract.
expected<std::shared_ptr<job_library>> load_job_library(const std::string& path,
                                                       const std::string& entry = {});

/// Runs the library's entry point with `args` on an environment configured by `config`
/// (parallelism.default, pipeline.max-parallelism, ... as stream_execution_environment reads
/// them), with job id `id`, and returns the stream and job graphs. The stream graph keeps the
/// library loaded. Errors: errc::invalid_argument for a bad configuration or an entry point that
/// failed (its message), the graph generators' errors otherwise.
expected<streaming::job_program> build_job_program(const job_library& library,
                                                   const std::vector<std::string>& args,
                                                   const api::configuration& config,
                                                   const graph::job_id& id);

/// Client side of `flint run`: uploads the library at `library_path`, then the job package
/// (library key, entry, args, config, the encoded JobGraph) under job_package_key(job id), and sets
/// `job.code` to the package's and the library's SHA-256: submit `job` after this, and its
/// TaskExecutors load only that package and that library. Blocking; not from an actor's handler.
expected<unit> upload_job(caf::actor_system& sys, const caf::actor& blob_server,
                          const std::string& library_path, const std::vector<std::string>& args,
                          const api::configuration& config, graph::job_graph& job,
                          const std::string& entry = {});

/// TaskExecutor side: for a task of a job it does not know yet, fetches the job package and the
/// library from the blob server at `blob_host`:`blob_port` (endpoint "blob_server", connected
/// on first use), stores the library in `cache_dir` (named by its content key; made with mode
/// 0700 when missing, refused when it is a symbolic link or another user's; when empty, a private
/// temporary directory removed with the factory), loads it, rebuilds the program, checks it
/// against the submitted JobGraph, caches it per job, then makes the stream task.
///
/// The task's descriptor names the job's code by hash (graph::job_code_hashes): a package or a
/// library that hashes to anything else fails the task, naming the job and both hashes. The
/// cached library file is opened without following a link and hashed again right before it is
/// loaded, from the very file the dynamic linker then maps: a file swapped in the cache is
/// refused, not loaded. Runs in the task's thread (the
/// factory blocks there while fetching, so TaskExecutors must run detached tasks); tasks of one
/// job arriving together load it once. A failure (unreachable server, missing package, load
/// error, a different program) fails the task with the cause; failures are not cached, so a
/// restarted task tries again. `env` must outlive the factory.
task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming::streaming_environment& env,
                                                           std::string blob_host,
                                                           std::uint16_t blob_port,
                                                           std::filesystem::path cache_dir);

/// Where the blob server is now: host and port of the leading JobManager, or nullopt while none
/// is known (with HA it moves with the leader). Called from task threads.
using blob_server_locator = std::function<std::optional<std::pair<std::string, std::uint16_t>>()>;

/// The same, asking `locate` where the blob server is each time it (re)connects.
task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming::streaming_environment& env,
                                                           blob_server_locator locate,
                                                           std::filesystem::path cache_dir);

/// The same with a blob server handle already at hand (an in-process blob server, tests).
task_executor::invokable_factory make_library_task_factory(caf::actor_system& sys,
                                                           streaming::streaming_environment& env,
                                                           caf::actor blob_server,
                                                           std::filesystem::path cache_dir);

} // namespace flint::api
