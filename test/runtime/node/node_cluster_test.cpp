// A standalone cluster in one test process: one JobManager node and two TaskManager nodes, each
// with its own actor system, talking over loopback exactly as separate processes do (issue 5's
// "2 TaskExecutors in separate actor systems"). Real sockets and threads: the test waits on
// conditions with deadlines, never on fixed sleeps.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include <caf/all.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/runtime/node/node_test_util.hpp"
#include "test/support/skip.hpp"
#include "test/support/word_counts.hpp"

using namespace flint;
using namespace std::chrono_literals;

namespace {

using test::eventually;
using test::graphs_of;
using test::program;
using test::temp_path;

/// One JobManager node and two TaskManager nodes on 127.0.0.1, with compiled-in programs.
struct three_nodes {
  std::unique_ptr<node::job_manager_node> jm;
  std::unique_ptr<node::task_manager_node> tm_a;
  std::unique_ptr<node::task_manager_node> tm_b;

  explicit three_nodes(std::chrono::milliseconds hb_interval = 1s,
                       std::chrono::milliseconds hb_timeout = 10s) {
    node::job_manager_settings js;
    js.rpc_address = "127.0.0.1";
    js.bind_host = "127.0.0.1";
    js.rpc_port = 0;
    js.heartbeat.interval = hb_interval;
    js.heartbeat.timeout = hb_timeout;
    js.blob_storage_directory = std::filesystem::temp_directory_path() / "flint_node_test_blobs";
    jm = std::make_unique<node::job_manager_node>(js);
    auto started = jm->start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    tm_a = make_tm("tm-a", hb_interval, hb_timeout);
    tm_b = make_tm("tm-b", hb_interval, hb_timeout);
  }

  ~three_nodes() {
    // TaskManagers first, as Flink's MiniCluster stops them.
    tm_a.reset();
    tm_b.reset();
    jm.reset();
  }

  std::unique_ptr<node::task_manager_node> make_tm(const std::string& id,
                                                   std::chrono::milliseconds hb_interval,
                                                   std::chrono::milliseconds hb_timeout) {
    node::task_manager_settings ts;
    ts.jobmanager_address = "127.0.0.1";
    ts.jobmanager_port = jm->rpc_port();
    ts.host = "127.0.0.1";
    ts.bind_host = "127.0.0.1";
    ts.resource_id = id;
    ts.number_of_slots = 2;
    ts.heartbeat.interval = hb_interval;
    ts.heartbeat.timeout = hb_timeout;
    node::task_manager_node_services services;
    services.make_invokables = [](caf::actor_system&, streaming::streaming_environment& env,
                                  const std::string&, node::job_manager_locator) {
      return streaming::make_stream_task_factory(env);
    };
    services.write_stdout = [](std::string_view) {};
    auto tm = std::make_unique<node::task_manager_node>(ts, services);
    auto started = tm->start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    return tm;
  }

  rpc::client_identity who(std::chrono::nanoseconds timeout = 10s) {
    return rpc::client_identity{"node_test_client", &jm->recorder(), timeout};
  }

  expected<resource_manager::resource_overview> overview() {
    caf::scoped_actor self{jm->system(), true};
    return jm->resource_manager_gateway().ask_blocking<resource_manager::request_resource_overview>(
      *self, who(), rpc::ack{});
  }

  /// Both TaskManagers registered their slots at the ResourceManager.
  void await_registered(int slots) {
    REQUIRE(eventually(
      [&] {
        auto o = overview();
        return o && o->number_task_managers == 2 && o->number_registered_slots == slots;
      },
      20s));
  }

  void add_program(const program& p) {
    tm_a->streaming().add_program(p.stream, p.job);
    tm_b->streaming().add_program(p.stream, p.job);
  }

  expected<unit> submit(const program& p) {
    caf::scoped_actor self{jm->system(), true};
    auto r = jm->dispatcher_gateway().ask_blocking<dispatcher::submit_job>(
      *self, who(), dispatcher::submit_job_request{*p.job});
    if (!r)
      return r.error();
    return unit{};
  }

  expected<dispatcher::job_result> result(const graph::job_id& id,
                                          std::chrono::nanoseconds timeout) {
    caf::scoped_actor self{jm->system(), true};
    return jm->dispatcher_gateway().ask_blocking<dispatcher::request_job_result>(
      *self, who(timeout), dispatcher::job_id_request{id});
  }

  expected<graph::job_status> status(const graph::job_id& id) {
    caf::scoped_actor self{jm->system(), true};
    auto r = jm->dispatcher_gateway().ask_blocking<dispatcher::request_job_status>(
      *self, who(), dispatcher::job_id_request{id});
    if (!r)
      return r.error();
    return r->status;
  }
};

} // namespace

TEST_CASE("TaskManagers in their own actor systems register at the JobManager's ResourceManager") {
  three_nodes cluster;
  cluster.await_registered(4);
  CHECK(cluster.tm_a->rpc_port() != 0);
  CHECK(cluster.tm_a->rpc_port() != cluster.tm_b->rpc_port());
  CHECK(cluster.tm_a->resource_id() == "tm-a");
  auto o = cluster.overview();
  REQUIRE(o);
  CHECK(o->number_free_slots == 4);
  // The JobManager's endpoints are published by id (contract B).
  auto endpoints = cluster.jm->endpoints();
  CHECK(std::find(endpoints.begin(), endpoints.end(), "dispatcher") != endpoints.end());
  CHECK(std::find(endpoints.begin(), endpoints.end(), "resource_manager") != endpoints.end());
  auto d = rpc::connect_endpoint(cluster.tm_a->system(), "127.0.0.1", cluster.jm->rpc_port(),
                                 "dispatcher", 5s);
  CHECK(d.has_value());
}

TEST_CASE("TaskManagers register again at a JobManager restarted on the same port") {
  three_nodes cluster;
  cluster.await_registered(4);
  auto settings = cluster.jm->settings();
  settings.rpc_port = cluster.jm->rpc_port();
  // The JobManager goes: the TaskManagers' handles of the ResourceManager die with its
  // connection, their standalone retrievals report "no leader" and resolve again.
  cluster.jm.reset();
  cluster.jm = std::make_unique<node::job_manager_node>(settings);
  auto started = cluster.jm->start();
  REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
  cluster.await_registered(4);
}

TEST_CASE(
  "wordcount at parallelism 4 over two TaskManager nodes with two slots each counts like a plain count") {
  if (!node::task_manager_node::remote_channels_available()) {
    test::skip_test_case("this build has no remote data channels (contract C)");
    return;
  }
  const std::string text = test::sample_text(3 * 512 * 1024);
  const auto expected = test::plain_count(text);
  temp_path input("wc_in");
  temp_path output("wc_out");
  {
    std::ofstream f(input.path, std::ios::binary);
    f << text;
  }
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "4"}});
  examples::build_wordcount(env, {input.path.string(), output.path.string()});
  auto p = graphs_of(env);

  three_nodes cluster;
  cluster.add_program(p);
  cluster.await_registered(4);
  auto submitted = cluster.submit(p);
  REQUIRE_MESSAGE(submitted.has_value(), submitted.error().to_string());
  auto r = cluster.result(p.job->job_id, 4min);
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  REQUIRE_MESSAGE(r->status == graph::job_status::finished, r->failure_cause);

  auto counted = test::read_counts(output.path);
  CHECK(counted.size() == expected.size());
  CHECK(counted == expected);
  // Both TaskManagers ran tasks, and their buffers came back.
  CHECK(cluster.tm_a->streaming().await_tasks_released(30s));
  CHECK(cluster.tm_b->streaming().await_tasks_released(30s));
}

namespace {

/// A job that never ends in test time at parallelism 4 (a huge sequence, slowed down by the map),
/// running on both TaskManagers once this returns.
program start_endless_job(three_nodes& cluster) {
  api::stream_execution_environment env;
  env.set_parallelism(4);
  env.generate_sequence(1, std::int64_t{1} << 60)
    .rebalance()
    .map([](const std::int64_t& x) {
      std::this_thread::sleep_for(1ms);
      return x;
    })
    .print();
  auto p = graphs_of(env);
  cluster.add_program(p);
  cluster.await_registered(4);
  REQUIRE(cluster.submit(p).has_value());
  // Running, with every slot taken (tasks on both TaskManagers).
  REQUIRE(eventually(
    [&] {
      auto s = cluster.status(p.job->job_id);
      auto o = cluster.overview();
      return s && *s == graph::job_status::running && o && o->number_free_slots == 0;
    },
    30s));
  REQUIRE(
    eventually([&] { return cluster.tm_a->streaming().shuffle().num_partitions() > 0; }, 30s));
  REQUIRE(
    eventually([&] { return cluster.tm_b->streaming().shuffle().num_partitions() > 0; }, 30s));
  return p;
}

} // namespace

TEST_CASE(
  "a TaskManager node shut down mid-run fails the job with a clear cause, without hanging") {
  // Short heartbeats: the JobManager must notice the loss within about a second.
  three_nodes cluster(200ms, 1s);
  auto p = start_endless_job(cluster);

  auto before = std::chrono::steady_clock::now();
  cluster.tm_b->shutdown();
  auto r = cluster.result(p.job->job_id, 60s);
  auto took = std::chrono::steady_clock::now() - before;
  REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  CHECK(r->status == graph::job_status::failed);
  MESSAGE("failure cause: " << r->failure_cause);
  // Flink's words: "The heartbeat of TaskManager with id ... timed out", or the lost connection.
  CHECK(r->failure_cause.find("tm-b") != std::string::npos);
  CHECK(took < 30s);
}

TEST_CASE(
  "a JobManager node shut down mid-run makes the TaskManagers fail the job's tasks and release them") {
  three_nodes cluster(200ms, 1s);
  start_endless_job(cluster);
  cluster.jm->shutdown();
  // The JobMaster's handle dies with the connection: each TaskExecutor's job leader retrieval
  // reports "no leader" and the job's tasks fail (Flink: "JobManager ... lost leadership").
  CHECK(cluster.tm_a->streaming().await_tasks_released(30s));
  CHECK(cluster.tm_b->streaming().await_tasks_released(30s));
}

namespace {

node::job_manager_settings loopback_job_manager() {
  node::job_manager_settings js;
  js.rpc_address = "127.0.0.1";
  js.bind_host = "127.0.0.1";
  js.rpc_port = 0;
  return js;
}

} // namespace

TEST_CASE("a JobManager without blob.storage.directory keeps blobs in a private directory it "
          "removes at shutdown") {
  node::job_manager_node jm(loopback_job_manager());
  auto started = jm.start();
  REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
  auto dir = jm.blob_storage_directory();
  CHECK(dir.parent_path() == std::filesystem::temp_directory_path());
  CHECK(dir.filename().string().starts_with("flint-blobStore-"));
  struct stat st {};
  REQUIRE(::lstat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(st.st_uid == ::geteuid());
  jm.shutdown();
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("a node refuses a blob.storage.directory that is a symbolic link or another user's, and "
          "keeps a configured one") {
  temp_path scratch_dir("node_blob_dir");
  auto scratch = scratch_dir.path;
  std::filesystem::create_directories(scratch / "target");
  std::filesystem::create_directory_symlink(scratch / "target", scratch / "link");
  auto js = loopback_job_manager();
  js.blob_storage_directory = scratch / "link";
  node::job_manager_node linked(js);
  auto refused = linked.start();
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("blob.storage.directory " + (scratch / "link").string())
        != std::string::npos);
  CHECK(refused.error().message.find("is a symbolic link") != std::string::npos);
  CHECK_FALSE(linked.running());

  auto foreign = scratch / "foreign";
  std::filesystem::create_directory(foreign);
  if (::geteuid() == 0)
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
  else
    foreign = "/";
  node::task_manager_settings ts;
  ts.jobmanager_address = "127.0.0.1";
  ts.jobmanager_port = 1;
  ts.host = "127.0.0.1";
  ts.bind_host = "127.0.0.1";
  ts.resource_id = "tm-foreign-blobs";
  ts.blob_storage_directory = foreign;
  node::task_manager_node tm(ts, {});
  auto theirs = tm.start();
  REQUIRE_FALSE(theirs.has_value());
  CHECK(theirs.error().message.find("is owned by user id") != std::string::npos);

  // A configured directory of this user is used and outlives the JobManager.
  js.blob_storage_directory = scratch / "configured";
  {
    node::job_manager_node jm(js);
    auto started = jm.start();
    REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
    CHECK(jm.blob_storage_directory() == scratch / "configured");
  }
  CHECK(std::filesystem::is_directory(scratch / "configured"));
}
