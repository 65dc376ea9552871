// `flint trace` against a live node: a MiniCluster in this process with a trace recorder, its
// "trace" endpoint published on a loopback port like a flint-node's, and the real `flint` binary.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <csignal>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "runtime/actors/minicluster/minicluster.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/actors/trace_server/trace_server.hpp"
#include "runtime/actors/trace_server/trace_server_gateway.hpp"
#include "test/apps/cli/command_runner.hpp"
#include "test/support/child_process.hpp"
#include "test/support/test_jobs.hpp"

using namespace flint;
using namespace std::chrono_literals;
using flint::test::describe;
using flint::test::run_command;

namespace {

const std::string flint_bin = FLINT_CLI_BIN;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// One node: a whole MiniCluster recording into one recorder, served by a trace server that is
/// published on 127.0.0.1 the way a flint-node publishes its locator.
struct traced_node {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  trace::trace_recorder recorder{trace::system_now_us};
  std::unique_ptr<minicluster::minicluster> cluster;
  caf::actor locator;
  caf::actor server;
  std::uint16_t port = 0;

  traced_node() {
    rpc::configure_node(cfg, {});
    sys = std::make_unique<caf::actor_system>(cfg);
    minicluster::minicluster_config mc;
    mc.number_of_task_managers = 2;
    mc.number_of_slots_per_task_manager = 2;
    cluster = std::make_unique<minicluster::minicluster>(*sys, mc, &recorder);
    cluster->start();
    rpc::endpoint_context ctx;
    ctx.endpoint_id = trace::trace_endpoint_name;
    server = trace::spawn_trace_server(*sys, ctx, recorder);
    locator = rpc::spawn_endpoint_locator(*sys);
    rpc::register_endpoint(locator, trace::trace_endpoint_name, server);
    auto bound = rpc::publish_locator(*sys, locator, 0, "127.0.0.1");
    REQUIRE(bound.has_value());
    port = *bound;
  }

  ~traced_node() {
    cluster->shutdown();
    cluster.reset();
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
    sys->middleman().unpublish(locator, port);
    server = nullptr;
    locator = nullptr;
    sys.reset();
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  void run_job(std::uint64_t id) {
    auto result = cluster->execute(test::three_vertex_job(2, id), 30s);
    REQUIRE(result.has_value());
    REQUIRE(result->status == graph::job_status::finished);
  }
};

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid())))
    .string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("flint trace --export chrome writes trace-event JSON with the slot protocol in order") {
  traced_node node;
  node.run_job(1);
  auto file = temp_file("flint_trace_chrome.json");
  auto r = run_command({flint_bin, "trace", "-m", node.address(), "--export", "chrome", file}, 30s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(contains(r.out, "trace records of " + node.address() + " to " + file));

  auto json = nlohmann::json::parse(read_file(file)); // throws (fails the test) on invalid JSON
  std::filesystem::remove(file);
  REQUIRE(json.contains("traceEvents"));
  std::map<std::string, double> first;
  std::size_t slices = 0;
  for (const auto& e : json["traceEvents"]) {
    auto ph = e["ph"].get<std::string>();
    if (ph != "X" && ph != "i")
      continue;
    ++slices;
    auto name = e["name"].get<std::string>();
    auto ts = e["ts"].get<double>();
    if (!first.count(name) || ts < first[name])
      first[name] = ts;
  }
  CHECK(slices > 20);
  // The job is submitted, the SlotPool asks the RM, the RM asks a TaskExecutor, the TaskExecutor
  // offers the slot to the JobMaster, which then deploys a task into it.
  std::vector<std::string> protocol = {"submit_job", "request_slot", "offer_slots", "submit_task",
                                       "update_task_execution_state"};
  for (const auto& m : protocol)
    REQUIRE_MESSAGE(first.count(m) == 1, m);
  for (std::size_t i = 1; i < protocol.size(); ++i) {
    CAPTURE(protocol[i - 1]);
    CAPTURE(protocol[i]);
    CHECK(first[protocol[i - 1]] <= first[protocol[i]]);
  }
  // A TaskExecutor registers before it is asked for a slot and offers it; the job may be
  // submitted before that (the MiniCluster does not wait for registrations, and a slot request
  // waits for them), so registration is ordered against the offer only.
  REQUIRE(first.count("register_task_executor") == 1);
  CHECK(first["register_task_executor"] <= first["offer_slots"]);
}

TEST_CASE("flint trace --export mermaid writes a sequence diagram of one job") {
  traced_node node;
  node.run_job(1);
  node.run_job(2);
  auto job2 = test::three_vertex_job(2, 2).job_id.to_string();
  auto job1 = test::three_vertex_job(2, 1).job_id.to_string();
  auto file = temp_file("flint_trace.mmd");
  auto r = run_command(
    {flint_bin, "trace", "-m", node.address(), "--job", job2, "--export", "mermaid", file}, 30s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto text = read_file(file);
  std::filesystem::remove(file);
  CHECK(text.rfind("sequenceDiagram", 0) == 0);
  CHECK(contains(text, "offer_slots"));
  CHECK(contains(text, job2));
  CHECK_FALSE(contains(text, job1));
}

TEST_CASE(
  "flint trace --no-follow prints the records the node has, filtered by method and endpoint") {
  traced_node node;
  node.run_job(1);
  auto r = run_command(
    {flint_bin, "trace", "-m", node.address(), "--no-follow", "--method", "offer_slots"}, 30s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  std::istringstream lines(r.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    CHECK_MESSAGE(contains(line, " offer_slots "), line);
    ++n;
  }
  CHECK(n >= 4); // send, receive, reply, response of at least one offer

  auto tm = run_command({flint_bin, "trace", "-m", node.address(), "--no-follow", "--json",
                         "--endpoint", "task_executor/"},
                        30s);
  REQUIRE_MESSAGE(tm.exit_code == 0, describe(tm));
  std::istringstream json_lines(tm.out);
  int records = 0;
  while (std::getline(json_lines, line)) {
    auto rec = nlohmann::json::parse(line);
    CHECK((rec["from"].get<std::string>().rfind("task_executor/", 0) == 0
           || rec["to"].get<std::string>().rfind("task_executor/", 0) == 0));
    ++records;
  }
  CHECK(records > 0);
}

TEST_CASE("flint trace follows a node live and stops cleanly on SIGINT") {
  traced_node node;
  node.run_job(1);
  flint::test::child_process tail(
    {flint_bin, "trace", "-m", node.address(), "--method", "offer_slots"});
  REQUIRE(tail.started());
  // The first job's offers show that the tail is up and has caught up with the ring.
  auto first = tail.read_line(20s);
  REQUIRE(first.has_value());
  CHECK(contains(*first, "offer_slots"));
  auto job2 = test::three_vertex_job(2, 2).job_id.to_string();
  node.run_job(2);
  bool seen = false;
  while (auto line = tail.read_line(10s)) {
    if (contains(*line, "job_master/" + job2)) {
      seen = true;
      break;
    }
  }
  CHECK_MESSAGE(seen, "the second job's offer_slots never reached the live tail");
  kill(tail.pid(), SIGINT);
  CHECK(tail.stop(5s) == 0);
}
