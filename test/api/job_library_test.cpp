// Job libraries (DESIGN.md "Job code"): build/jobs/wordcount.so builds the very JobGraph the
// compiled-in WordCount builds; loading fails clearly; a program that differs between processes
// is refused; and WordCount runs from its library on a MiniCluster whose TaskExecutors fetch it
// from a blob server in another actor system.

#include "api/job_library.hpp"

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/actors/blob/blob_client.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/blob/blob_server.hpp"
#include "runtime/actors/blob/job_package.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/minicluster/minicluster.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/support/word_counts.hpp"
#include "test/runtime/actors/blob/blob_test_util.hpp"

#include <doctest/doctest.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace {

const std::string jobs_dir = FLINT_JOBS_DIR;
const graph::job_id fixed_id{0x1234, 0x5678};

/// The error of `x`, or nothing: doctest evaluates a message even when the check passes.
template <class T>
std::string why(const expected<T>& x) {
  return x ? std::string{} : x.error().to_string();
}

/// True when the shared object at `path` is loaded in this process (asked without loading it).
bool is_loaded(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h != nullptr)
    ::dlclose(h);
  return h != nullptr;
}

std::shared_ptr<api::job_library> load(const std::string& name) {
  auto library = api::load_job_library(jobs_dir + "/" + name);
  REQUIRE_MESSAGE(library.has_value(), why(library));
  return *library;
}

graph::job_graph compiled_wordcount(const api::configuration& config,
                                    const examples::wordcount_options& options) {
  api::stream_execution_environment env(config);
  env.set_job_id(fixed_id);
  examples::build_wordcount(env, options);
  auto job = env.get_job_graph(examples::wordcount_job_name);
  REQUIRE(job.has_value());
  return std::move(*job);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// FLINT_TEST_JOB_UID for one scope.
struct scoped_env {
  explicit scoped_env(const char* value) { ::setenv("FLINT_TEST_JOB_UID", value, 1); }
  ~scoped_env() { ::unsetenv("FLINT_TEST_JOB_UID"); }
};

} // namespace

TEST_CASE("wordcount.so builds the JobGraph of the compiled-in WordCount, operator ids and all") {
  auto library = load("wordcount.so");
  api::configuration config{{"parallelism.default", "3"}, {"pipeline.max-parallelism", "64"}};

  auto built = api::build_job_program(*library, {}, config, fixed_id);
  REQUIRE_MESSAGE(built.has_value(), why(built));
  auto compiled = compiled_wordcount(config, {});
  CHECK(built->job->job_id == fixed_id);
  CHECK(built->job->name == examples::wordcount_job_name);
  // The collection source is not parallel; the rest runs at parallelism.default.
  std::set<int> parallelisms;
  for (const auto& v : built->job->vertices)
    parallelisms.insert(v.parallelism);
  CHECK(parallelisms == std::set<int>{1, 3});
  CHECK(built->job->execution_config.max_parallelism == 64);
  CHECK(*built->job == compiled);
  CHECK(graph::check_same_program(compiled, *built->job).has_value());

  auto with_files = api::build_job_program(
    *library, {"--input", "/data/in.txt", "--output", "/data/out"}, config, fixed_id);
  REQUIRE(with_files.has_value());
  CHECK(*with_files->job == compiled_wordcount(config, {"/data/in.txt", "/data/out"}));
  // A file source is another operator than the collection source: the ids tell them apart.
  CHECK_FALSE(graph::check_same_program(compiled, *with_files->job).has_value());
}

TEST_CASE("a program built from a library keeps the library loaded until the program is gone") {
  // Copied so no other test holds this file open.
  test::temp_directory dir{"flint-job-library-lifetime"};
  auto path = (dir.path / "wordcount_copy.so").string();
  std::filesystem::copy_file(jobs_dir + "/wordcount.so", path);
  std::optional<streaming::job_program> program;
  {
    auto library = api::load_job_library(path);
    REQUIRE(library.has_value());
    auto built = api::build_job_program(**library, {}, {{"parallelism.default", "2"}}, fixed_id);
    REQUIRE(built.has_value());
    program = std::move(*built);
  }
  // The stream graph's operator factories are the library's code.
  CHECK(is_loaded(path));
  program.reset();
  CHECK_FALSE(is_loaded(path));
}

TEST_CASE("loading fails clearly: missing file, not a shared object, no entry point") {
  auto missing = api::load_job_library(jobs_dir + "/no_such_job.so");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(contains(missing.error().message, "no_such_job.so does not exist"));

  test::temp_directory dir{"flint-job-library-test"};
  auto text = (dir.path / "not_a_library.so").string();
  std::ofstream(text) << "this is not an ELF file, just text long enough to have a header\n";
  auto not_elf = api::load_job_library(text);
  REQUIRE_FALSE(not_elf.has_value());
  CHECK(not_elf.error().code == errc::invalid_argument);
  CHECK(contains(not_elf.error().message, "cannot load job library " + text + ": "));
  CHECK(contains(not_elf.error().message, "ELF")); // the dynamic linker's own words

  auto no_entry = api::load_job_library(jobs_dir + "/no_entry.so");
  REQUIRE_FALSE(no_entry.has_value());
  CHECK(no_entry.error().code == errc::invalid_argument);
  CHECK(contains(no_entry.error().message, "has no entry point"));
  CHECK(contains(no_entry.error().message, "flint_job_main"));
}

TEST_CASE("a named entry (flint run -c) builds its own program; other names are refused, naming "
          "the symbol") {
  auto named = api::load_job_library(jobs_dir + "/wordcount.so", "sequential");
  REQUIRE_MESSAGE(named.has_value(), why(named));
  auto built = api::build_job_program(**named, {}, {{"parallelism.default", "4"}}, fixed_id);
  REQUIRE_MESSAGE(built.has_value(), why(built));
  CHECK(built->job->name == "Streaming WordCount (sequential)");
  for (const auto& v : built->job->vertices)
    CHECK(v.parallelism == 1);
  auto main = api::load_job_library(jobs_dir + "/wordcount.so", "flint_job_main");
  REQUIRE(main.has_value());
  auto main_built = api::build_job_program(**main, {}, {{"parallelism.default", "4"}}, fixed_id);
  REQUIRE(main_built.has_value());
  CHECK(main_built->job->name == "Streaming WordCount");

  auto unknown = api::load_job_library(jobs_dir + "/wordcount.so", "nope");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::invalid_argument);
  CHECK(contains(unknown.error().message, "does not export flint_job_entry_nope"));
  // The prefix keeps -c from reaching what the library's dependencies export (libc's `system`).
  auto libc = api::load_job_library(jobs_dir + "/wordcount.so", "system");
  REQUIRE_FALSE(libc.has_value());
  CHECK(contains(libc.error().message, "flint_job_entry_system"));
  for (const std::string& bad : std::vector<std::string>{"../x", "a b", "x;rm", std::string(129, 'a')}) {
    CAPTURE(bad);
    auto refused = api::load_job_library(jobs_dir + "/wordcount.so", bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(contains(refused.error().message, "is not a job entry name"));
  }
}

TEST_CASE("an entry point that refuses its arguments or a bad configuration fail with the reason") {
  auto library = load("wordcount.so");
  auto bad_args = api::build_job_program(*library, {"--bogus"}, {}, fixed_id);
  REQUIRE_FALSE(bad_args.has_value());
  CHECK(contains(bad_args.error().message, "the entry point of job library"));
  CHECK(contains(bad_args.error().message, "unexpected argument '--bogus'"));

  auto bad_config =
    api::build_job_program(*library, {}, {{"parallelism.default", "zero"}}, fixed_id);
  REQUIRE_FALSE(bad_config.has_value());
  CHECK(bad_config.error().code == errc::invalid_argument);
  CHECK(contains(bad_config.error().message, "parallelism.default"));
}

TEST_CASE("a library whose graph differs per process is caught by the program check") {
  auto library = load("random_uid.so");
  std::optional<graph::job_graph> a, b;
  {
    scoped_env uid("map-on-the-client");
    auto built = api::build_job_program(*library, {}, {}, fixed_id);
    REQUIRE(built.has_value());
    a = *built->job;
    // Same process state, same graph.
    auto again = api::build_job_program(*library, {}, {}, fixed_id);
    REQUIRE(again.has_value());
    CHECK(graph::check_same_program(*a, *again->job).has_value());
  }
  {
    scoped_env uid("map-on-a-task-executor");
    auto built = api::build_job_program(*library, {}, {}, fixed_id);
    REQUIRE(built.has_value());
    b = *built->job;
  }
  auto same = graph::check_same_program(*a, *b);
  REQUIRE_FALSE(same.has_value());
  CHECK(contains(same.error().message, "differs from the submitted one"));
  CHECK(contains(same.error().message, "Map"));
}

namespace {

/// The JobManager side of the end-to-end cases: a blob server in an actor system of its own,
/// published on loopback like a JobManager's locator.
struct blob_node {
  test::temp_directory storage{"flint-job-library-blobs"};
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor locator;
  caf::actor server;
  std::uint16_t port = 0;

  blob_node() {
    rpc::configure_node(cfg, {});
    sys = std::make_unique<caf::actor_system>(cfg);
    locator = rpc::spawn_endpoint_locator(*sys);
    server = blob::spawn_blob_server(*sys, rpc::endpoint_context{"blob_server", nullptr, {}},
                                     storage.path);
    rpc::register_endpoint(locator, "blob_server", server);
    auto bound = rpc::publish_locator(*sys, locator, 0, "127.0.0.1");
    REQUIRE(bound.has_value());
    port = *bound;
  }
  ~blob_node() {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  }
};

/// A MiniCluster whose TaskExecutors run job libraries fetched from `blobs`.
struct library_cluster {
  test::temp_directory cache{"flint-job-library-cache"};
  // Declared before the actor system, so they outlive it: its endpoints and tasks use them until
  // it is gone (a slot pool's late free_slot reply was recorded into a destroyed recorder).
  trace::trace_recorder recorder{trace::system_now_us};
  streaming::streaming_environment env;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<minicluster::minicluster> cluster;

  library_cluster(std::uint16_t blob_port, int task_managers, int slots) {
    rpc::configure_node(cfg, {});
    sys = std::make_unique<caf::actor_system>(cfg);
    minicluster::minicluster_config mc;
    mc.number_of_task_managers = task_managers;
    mc.number_of_slots_per_task_manager = slots;
    mc.detached_tasks = true;
    mc.invokables = api::make_library_task_factory(*sys, env, "127.0.0.1", blob_port, cache.path);
    cluster = std::make_unique<minicluster::minicluster>(*sys, mc, &recorder);
    cluster->start();
    REQUIRE(cluster->await_dispatcher(30s).has_value());
  }
  ~library_cluster() {
    cluster->shutdown();
    env.await_tasks_released(30s);
    cluster.reset();
  }

  std::vector<std::string> cached_library_paths() const {
    std::vector<std::string> paths;
    for (auto& entry : std::filesystem::directory_iterator(cache.path))
      if (entry.path().extension() == ".so")
        paths.push_back(entry.path().string());
    return paths;
  }
  std::size_t cached_libraries() const { return cached_library_paths().size(); }
};

/// What `flint run` does: load, build, upload. Returns the submitted JobGraph.
graph::job_graph client_submits(const blob_node& blobs, const std::string& library_name,
                                const std::vector<std::string>& args,
                                const api::configuration& config, const std::string& entry = {}) {
  auto library = api::load_job_library(jobs_dir + "/" + library_name, entry);
  REQUIRE_MESSAGE(library.has_value(), why(library));
  graph::job_id id{0xabc, static_cast<std::uint64_t>(std::rand())};
  auto built = api::build_job_program(**library, args, config, id);
  REQUIRE_MESSAGE(built.has_value(), why(built));
  auto job = *built->job;
  auto uploaded = api::upload_job(*blobs.sys, blobs.server, jobs_dir + "/" + library_name, args,
                                  config, job, entry);
  REQUIRE_MESSAGE(uploaded.has_value(), why(uploaded));
  return job;
}

} // namespace

TEST_CASE("WordCount runs from its library on TaskExecutors that fetch it from the blob server") {
  blob_node blobs;
  library_cluster cluster(blobs.port, 2, 2);
  test::temp_directory work{"flint-job-library-wordcount"};
  auto input = work.path / "in.txt";
  auto output = work.path / "out";
  std::string text;
  for (int i = 0; i < 3000; ++i)
    text += "Line " + std::to_string(i % 97) + ": to be, or NOT to_be; that is the question "
      + std::to_string(i % 13) + "\n";
  std::ofstream(input) << text;

  auto job =
    client_submits(blobs, "wordcount.so", {"--input", input.string(), "--output", output.string()},
                   {{"parallelism.default", "4"}});
  auto result = cluster.cluster->execute(job, 4min);
  REQUIRE_MESSAGE(result.has_value(), why(result));
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  CHECK(test::read_counts(output) == test::plain_count(text));
  // Every task of the job (several at once, on two TaskExecutors) shared one fetched library.
  CHECK(cluster.cached_libraries() == 1);
}

TEST_CASE("TaskExecutors rebuild a job by the entry it was submitted with (flint run -c)") {
  blob_node blobs;
  library_cluster cluster(blobs.port, 2, 2);
  test::temp_directory work{"flint-job-library-entry"};
  auto input = work.path / "in.txt";
  auto output = work.path / "out";
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += "to be or not to be " + std::to_string(i % 7) + "\n";
  std::ofstream(input) << text;
  // flint_job_main would build a parallelism-4 graph here: a TaskExecutor that rebuilt the job
  // by it would find another program and fail the job.
  auto job = client_submits(blobs, "wordcount.so",
                            {"--input", input.string(), "--output", output.string()},
                            {{"parallelism.default", "4"}}, "sequential");
  CHECK(job.name == "Streaming WordCount (sequential)");
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE_MESSAGE(result.has_value(), why(result));
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  CHECK(test::read_counts(output) == test::plain_count(text));
}

TEST_CASE(
  "a TaskExecutor unloads a job's library when the job's last task is gone, and loads it again for the next") {
  blob_node blobs;
  library_cluster cluster(blobs.port, 1, 2);
  test::temp_directory work{"flint-job-library-unload"};
  auto input = work.path / "in.txt";
  std::string text = "to be or not to be\nthat is the question\n";
  std::ofstream(input) << text;
  for (int run = 1; run <= 2; ++run) {
    CAPTURE(run);
    auto output = work.path / ("out" + std::to_string(run));
    auto job = client_submits(blobs, "wordcount.so",
                              {"--input", input.string(), "--output", output.string()},
                              {{"parallelism.default", "2"}});
    auto result = cluster.cluster->execute(job, 2min);
    REQUIRE_MESSAGE(result.has_value(), why(result));
    REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
    CHECK(test::read_counts(output) == test::plain_count(text));
    REQUIRE(cluster.env.await_tasks_released(30s));
    auto libraries = cluster.cached_library_paths();
    REQUIRE(libraries.size() == 1);
    // The last task actor lets go of the library when CAF destroys it, which can be a little
    // after its resources were released (a message in flight still holds it): wait for that.
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (is_loaded(libraries.front()) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    CHECK_FALSE(is_loaded(libraries.front()));
  }
  CHECK(cluster.cached_libraries() == 1);
}

TEST_CASE(
  "a TaskExecutor that rebuilds a different program fails the job and names the difference") {
  blob_node blobs;
  library_cluster cluster(blobs.port, 1, 2);
  graph::job_graph job;
  {
    scoped_env uid("map-on-the-client");
    job = client_submits(blobs, "random_uid.so", {}, {{"parallelism.default", "2"}});
  }
  // The TaskExecutor's build draws a random uid.
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  MESSAGE(result->failure_cause);
  CHECK(contains(result->failure_cause, "Could not load the program of"));
  CHECK(contains(result->failure_cause, "random_uid.so"));
  CHECK(contains(result->failure_cause, "differs from the submitted one"));
  CHECK(contains(result->failure_cause, "(uid 'map-on-the-client') and rebuilt as"));
}

TEST_CASE("a task of a job the blob server does not know fails with the missing package named") {
  blob_node blobs;
  library_cluster cluster(blobs.port, 1, 1);
  auto library = load("wordcount.so");
  auto built = api::build_job_program(*library, {}, {}, graph::job_id{0xdead, 0xbeef});
  REQUIRE(built.has_value());
  auto result = cluster.cluster->execute(*built->job, 2min); // never uploaded
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  CHECK(contains(result->failure_cause,
                 "fetching the package of job " + graph::job_id{0xdead, 0xbeef}.to_string()));
  CHECK(contains(result->failure_cause, "not_found") + contains(result->failure_cause, "no blob")
        >= 1);
}

TEST_CASE("a task whose blob server cannot be reached fails with the address named") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {});
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  library_cluster cluster(1, 1, 1);
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  MESSAGE(result->failure_cause);
  CHECK(contains(result->failure_cause, "Could not load the program of"));
  CHECK(contains(result->failure_cause, "127.0.0.1:1"));
}

TEST_CASE("a job library whose bytes differ from the submitted hash is refused by the TaskManager") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {});
  // Whatever serves the library (here its blob store, tampered with) hands out other bytes.
  std::size_t swapped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(blobs.storage.path))
    if (entry.path().filename().string().size() == 64) {
      std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << "not the library";
      ++swapped;
    }
  REQUIRE(swapped == 1);
  library_cluster cluster(blobs.port, 1, 1);
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  MESSAGE(result->failure_cause);
  // The blob client checks every content-keyed blob against its key (blob_client.cpp).
  CHECK(contains(result->failure_cause, "fetching job library wordcount.so"));
  CHECK(contains(result->failure_cause, "arrived corrupted: its content hashes to"));
  CHECK(cluster.cached_libraries() == 0); // nothing of it was kept, let alone loaded
}

namespace {

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_CASE("the uploaded job names its package and library by SHA-256") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {});
  CHECK(job.code.library == blob::content_key(file_bytes(jobs_dir + "/wordcount.so")));
  auto stored = file_bytes(blobs.storage.path / blob::job_package_key(job.job_id.to_string()));
  CHECK(job.code.package == blob::content_key(stored));
}

TEST_CASE("a swapped cached library is refused by hash") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {});
  library_cluster cluster(blobs.port, 1, 1);
  // Another loadable library where the TaskExecutor keeps wordcount.so, as if swapped after an
  // earlier job fetched it.
  auto cached = cluster.cache.path / (job.code.library + ".so");
  std::filesystem::copy_file(jobs_dir + "/random_uid.so", cached);
  auto swapped_hash = blob::content_key(file_bytes(cached));
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  MESSAGE(result->failure_cause);
  CHECK(contains(result->failure_cause, "Could not load the program of"));
  CHECK(contains(result->failure_cause, "of job " + job.job_id.to_string()));
  CHECK(contains(result->failure_cause, "hashes to SHA-256 " + swapped_hash));
  CHECK(contains(result->failure_cause, "names SHA-256 " + job.code.library));
  CHECK(contains(result->failure_cause, "it is not loaded"));
  // Loaded, its entry point would have run and built another program.
  CHECK_FALSE(contains(result->failure_cause, "differs from the submitted one"));
  CHECK_FALSE(is_loaded(cached.string()));
  CHECK(file_bytes(cached) == file_bytes(jobs_dir + "/random_uid.so")); // refused, not repaired
}

TEST_CASE("one TaskExecutor runs two jobs' different libraries at once, each its own") {
  // The second library loads while the first is mapped. Loaded by the name /proc/self/fd/N, the
  // second got the first job's library (the dynamic linker returns a loaded library whose name
  // matches, and N was reused) and its program differed from the submitted one.
  blob_node blobs;
  library_cluster cluster(blobs.port, 1, 2);
  auto endless = client_submits(blobs, "cli_endless.so", {}, {{"parallelism.default", "1"}});
  auto running = std::async(std::launch::async,
                            [&] { return cluster.cluster->execute(endless, 2min); });
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (cluster.cached_libraries() < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  REQUIRE(cluster.cached_libraries() == 1);
  while (!is_loaded(cluster.cached_library_paths().front())
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  REQUIRE(is_loaded(cluster.cached_library_paths().front()));

  test::temp_directory work{"flint-job-library-two-jobs"};
  auto input = work.path / "in.txt";
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += "a b c " + std::to_string(i % 7) + "\n";
  std::ofstream(input) << text;
  auto wordcount = client_submits(
    blobs, "wordcount.so", {"--input", input.string(), "--output", (work.path / "wc").string()},
    {{"parallelism.default", "1"}});
  auto counted = cluster.cluster->execute(wordcount, 2min);
  REQUIRE(counted.has_value());
  CHECK_MESSAGE(counted->status == graph::job_status::finished, counted->failure_cause);
  CHECK(test::read_counts(work.path / "wc") == test::plain_count(text));
  CHECK(cluster.cached_libraries() == 2);

  auto gw = cluster.cluster->dispatcher_gateway();
  REQUIRE(gw.has_value());
  trace::trace_recorder rec{trace::system_now_us};
  rpc::client_identity who{"test_client", &rec, 10s};
  caf::scoped_actor self{*cluster.sys, true};
  auto cancelled =
    gw->ask_blocking<dispatcher::cancel_job>(*self, who, dispatcher::job_id_request{endless.job_id});
  CHECK(cancelled.has_value());
  auto ended = running.get();
  REQUIRE(ended.has_value());
  CHECK(ended->status == graph::job_status::canceled);
}

TEST_CASE("a cached library that is a symbolic link is not loaded") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {});
  library_cluster cluster(blobs.port, 1, 1);
  test::temp_directory elsewhere{"flint-job-library-elsewhere"};
  auto target = elsewhere.path / "wordcount.so";
  std::filesystem::copy_file(jobs_dir + "/wordcount.so", target);
  std::filesystem::create_symlink(target, cluster.cache.path / (job.code.library + ".so"));
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  CHECK(contains(result->failure_cause, "is a symbolic link; it is not loaded"));
  CHECK_FALSE(is_loaded(target.string()));
}

TEST_CASE("a package replaced after submission is refused by the hash in the deployment") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {{"parallelism.default", "1"}});
  // Replaced behind the blob server's back (it refuses a second put): the same program, but not
  // the bytes the job was submitted with.
  auto path = blobs.storage.path / blob::job_package_key(job.job_id.to_string());
  auto stored = file_bytes(path);
  auto package = blob::decode_job_package({stored.data(), stored.size()});
  REQUIRE(package.has_value());
  package->library_name = "replaced.so";
  auto replaced = blob::encode_job_package(*package);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
    .write(replaced.data(), static_cast<std::streamsize>(replaced.size()));
  auto replaced_hash = blob::content_key({replaced.data(), replaced.size()});
  library_cluster cluster(blobs.port, 1, 1);
  auto result = cluster.cluster->execute(job, 2min);
  REQUIRE(result.has_value());
  MESSAGE(result->failure_cause);
  CHECK(result->status == graph::job_status::failed);
  CHECK(contains(result->failure_cause, "the package of job " + job.job_id.to_string()
                                          + " hashes to SHA-256 " + replaced_hash));
  CHECK(contains(result->failure_cause, "names SHA-256 " + job.code.package));
  CHECK(cluster.cached_libraries() == 0);
}

TEST_CASE("a deployment naming another library, or no hashes at all, is refused") {
  blob_node blobs;
  auto job = client_submits(blobs, "wordcount.so", {}, {{"parallelism.default", "1"}});
  library_cluster cluster(blobs.port, 1, 1);
  auto other = job;
  other.code.library = blob::content_key("some other library");
  auto result = cluster.cluster->execute(other, 2min);
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::failed);
  CHECK(contains(result->failure_cause, "names library SHA-256 " + job.code.library));
  CHECK(contains(result->failure_cause, "names SHA-256 " + other.code.library));

  auto unnamed = client_submits(blobs, "wordcount.so", {}, {{"parallelism.default", "1"}});
  unnamed.code = {};
  auto refused = cluster.cluster->execute(unnamed, 2min);
  REQUIRE(refused.has_value());
  CHECK(refused->status == graph::job_status::failed);
  CHECK(contains(refused->failure_cause, "names no hash of the job's package and library"));
  CHECK(cluster.cached_libraries() == 0);
}
