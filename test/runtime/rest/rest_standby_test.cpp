// A standby JobManager's REST endpoint answers as the leader's (Flink's standby REST endpoints
// answer through the leader): two JobManagers with REST on one real ZooKeeper (loopback); a call
// to the standby that needs the leader gets the leader's own answer, a call the leader cannot be
// asked for from here gets a 307 to it, and a request another JobManager already forwarded is
// not forwarded again (503).

#include <doctest/doctest.h>

#include <atomic>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/common/logging.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "runtime/http/httplib.hpp"
#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#include "test/runtime/node/ha_test_task_manager.hpp"
#include "test/runtime/node/node_test_util.hpp"
#include "test/support/zookeeper_server.hpp"

using namespace flint;
using namespace std::chrono_literals;
using json = nlohmann::json;
using test::eventually;

namespace {

node::high_availability_settings ha_settings(const test::zookeeper_server& zk,
                                             const std::filesystem::path& storage) {
  node::high_availability_settings h;
  h.zookeeper = true;
  h.quorum = zk.connect_string();
  h.cluster_id = "rest_standby";
  h.storage_dir = storage;
  h.session_timeout = 2000ms;
  h.connection_timeout = 5000ms;
  h.retry_wait = 100ms;
  h.max_retry_attempts = 2;
  return h;
}

std::unique_ptr<node::job_manager_node> start_jm(const node::high_availability_settings& h,
                                                 const std::filesystem::path& blobs,
                                                 std::shared_ptr<std::atomic<int>> builds = {}) {
  node::job_manager_settings js;
  js.rpc_address = "127.0.0.1";
  js.bind_host = "127.0.0.1";
  js.rpc_port = 0;
  js.heartbeat.interval = 500ms;
  js.heartbeat.timeout = 10s;
  js.blob_storage_directory = blobs;
  js.high_availability = h;
  js.rest.enabled = true;
  js.rest.bind_address = "127.0.0.1";
  js.rest.bind_port = "0";
  js.rest.upload_dir = blobs / "uploads";
  // A job program builder that counts the libraries it was asked to build (and builds none).
  node::job_manager_node_services services;
  services.job_programs.build = [builds](const std::filesystem::path&,
                                         const std::vector<std::string>&,
                                         const config::job_settings&, const graph::job_id&,
                                         const std::string&) -> expected<rest::job_program> {
    if (builds)
      ++*builds;
    return make_error(errc::invalid_argument, "this test builds no job");
  };
  services.job_programs.upload = [](caf::actor_system&, const caf::actor&,
                                    const std::filesystem::path&, const std::vector<std::string>&,
                                    const config::job_settings&, graph::job_graph&,
                                    const std::string&) -> expected<unit> { return unit{}; };
  auto jm = std::make_unique<node::job_manager_node>(js, rpc::node_options{}, services);
  auto started = jm->start();
  REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
  REQUIRE(jm->rest_port() != 0);
  return jm;
}

std::unique_ptr<node::task_manager_node> start_tm(const node::high_availability_settings& h) {
  return test::start_ha_task_manager(h, "tm-standby", 3);
}

bool leads(node::job_manager_node& jm) {
  return !jm.leader_id("dispatcher").is_nil() && !jm.leader_id("resource_manager").is_nil();
}

struct answer {
  int status = 0;
  std::string text;
  std::string location;
};

answer call(std::uint16_t port, const std::string& method, const std::string& path,
            const std::string& body = {}, const httplib::Headers& headers = {}) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(20, 0);
  c.set_connection_timeout(5, 0);
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.headers = headers;
  req.body = body;
  if (!body.empty())
    req.set_header("Content-Type", "application/json");
  answer a;
  if (auto r = c.send(req)) {
    a.status = r->status;
    a.text = r->body;
    a.location = r->get_header_value("Location");
  }
  return a;
}

} // namespace

TEST_CASE("a standby JobManager's REST endpoint answers with the leader's answer, redirects when "
          "it cannot ask the leader, and answers 503 to a request already forwarded") {
  test::zookeeper_server zk;
  test::temp_path dir("rest_standby");
  std::filesystem::create_directories(dir.path);
  auto h = ha_settings(zk, dir.path / "ha");
  auto leader = start_jm(h, dir.path / "blobs1");
  REQUIRE(eventually([&] { return leads(*leader); }, 20s));
  auto standby_builds = std::make_shared<std::atomic<int>>(0);
  auto standby = start_jm(h, dir.path / "blobs2", standby_builds);
  auto tm = start_tm(h);
  REQUIRE(eventually(
    [&] {
      auto o = call(leader->rest_port(), "GET", "/overview");
      return o.status == 200 && json::parse(o.text)["taskmanagers"] == 1;
    },
    20s));
  REQUIRE_FALSE(leads(*standby));
  CHECK(standby->leader_rest_url() == "http://127.0.0.1:" + std::to_string(leader->rest_port()));
  CHECK_FALSE(leader->leader_rest_url().has_value());

  // Reads, under the root and /v1, with a query: the leader's answer (its one TaskManager of
  // three slots, which only the leading ResourceManager knows).
  for (const std::string prefix : {"", "/v1"}) {
    auto o = call(standby->rest_port(), "GET", prefix + "/overview");
    REQUIRE_MESSAGE(o.status == 200, o.text);
    auto overview = json::parse(o.text);
    CHECK(overview["taskmanagers"] == 1);
    CHECK(overview["slots-total"] == 3);
    auto m = call(standby->rest_port(), "GET",
                  prefix + "/jobmanager/metrics?get=numRegisteredTaskManagers");
    REQUIRE_MESSAGE(m.status == 200, m.text);
    CHECK(json::parse(m.text)[0]["value"] == "1");
    CHECK(call(standby->rest_port(), "GET", prefix + "/jobs").text
          == call(leader->rest_port(), "GET", prefix + "/jobs").text);
  }
  // A change with a body: the leader's own answer (an unknown job: its 404, not a 503).
  auto stop = call(standby->rest_port(), "POST", "/jobs/0123456789abcdef0123456789abcdef/stop",
                   R"({"drain": false})");
  CHECK(stop.status == 404);
  CHECK(stop.text.find("errors") != std::string::npos);
  // A TaskManager's log is as large as the file: the client is sent to the leader for it.
  auto log = call(standby->rest_port(), "GET", "/v1/taskmanagers/tm-standby/log");
  CHECK(log.status == 307);
  CHECK(log.location
        == "http://127.0.0.1:" + std::to_string(leader->rest_port()) + "/v1/taskmanagers/tm-standby/log");
  // A library uploaded to the standby is not run there (its code would run on a node that does
  // not lead): the leader answers, which has no such jar.
  std::filesystem::create_directories(dir.path / "blobs2" / "uploads");
  std::ofstream(dir.path / "blobs2" / "uploads" / "x_job.so") << "library";
  auto jar_run = call(standby->rest_port(), "POST", "/jars/x_job.so/run", "{}");
  CHECK(jar_run.status == 404);
  CHECK(call(standby->rest_port(), "POST", "/jars/x_job.so/plan", "{}").status == 404);
  CHECK(*standby_builds == 0);
  // What the standby serves itself (its own configuration) stays its own.
  CHECK(call(standby->rest_port(), "GET", "/config").status == 200);

  // A request another JobManager already forwarded is not forwarded again.
  auto again = call(standby->rest_port(), "GET", "/overview", {},
                    {{"X-Flint-Forwarded-By", "127.0.0.1"}});
  CHECK(again.status == 503);
  CHECK(again.text.find("leader election") != std::string::npos);

  // The leader's published REST endpoint cannot be reached from here: a 307 to it.
  {
    auto zk_client =
      std::make_shared<ha::zookeeper_client>(make_endpoint_logger("rest_standby_test"));
    REQUIRE(zk_client->connect(zk.connect_string(), 4000ms).has_value());
    auto path = ha::rest_endpoint_path(ha::cluster_path(h.root, h.cluster_id), "127.0.0.1",
                                       leader->rpc_port());
    auto published = zk_client->get(path);
    REQUIRE(published.has_value());
    // Port 1 on loopback: nothing listens.
    REQUIRE(zk_client->set(path, "http://127.0.0.1:1").has_value());
    auto redirected = call(standby->rest_port(), "GET", "/v1/jobs/overview?x=1");
    CHECK(redirected.status == 307);
    CHECK(redirected.location == "http://127.0.0.1:1/v1/jobs/overview?x=1");
    REQUIRE(zk_client->set(path, published->data).has_value());
  }

  // The leader goes: the standby leads and answers itself.
  leader->shutdown();
  REQUIRE(eventually([&] { return leads(*standby); }, 30s));
  CHECK_FALSE(standby->leader_rest_url().has_value());
  REQUIRE(eventually(
    [&] { return call(standby->rest_port(), "GET", "/overview").status == 200; }, 20s));
  tm.reset();
}
