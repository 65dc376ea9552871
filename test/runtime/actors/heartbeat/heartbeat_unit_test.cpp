// Heartbeat logic without actors: monitors and managers on a manual executor, scripted targets,
// configuration and codec.

#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <stdexcept>

#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_monitor.hpp"
#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"
#include "test/runtime/actors/heartbeat/manual_executor.hpp"
#include "test/runtime/actors/heartbeat/recording_listener.hpp"

using namespace flint;
using namespace flint::heartbeat;
using namespace flint::heartbeat::test;
using namespace std::chrono_literals;

namespace {

/// A target whose calls are recorded and complete as scripted (success when the script is empty).
struct scripted_target {
  struct call {
    resource_id origin;
    std::string data;
    std::chrono::nanoseconds at;
  };

  explicit scripted_target(manual_executor& exec) : exec(exec) {}

  manual_executor& exec;
  std::vector<call> requests;
  std::vector<call> answers;
  std::deque<expected<unit>> script;
  /// Called (later, in the main thread) for each request: lets a test play the answering peer.
  std::function<void(const call&)> on_request;

  void complete(heartbeat_target::done_fn done) {
    expected<unit> result = unit{};
    if (!script.empty()) {
      result = script.front();
      script.pop_front();
    }
    // RPC results arrive later, in the main thread, never inside the call.
    exec.execute([done = std::move(done), result] { done(result); });
  }

  static heartbeat_target make(const std::shared_ptr<scripted_target>& self) {
    heartbeat_target t;
    t.request_heartbeat = [self](const resource_id& origin, payload data,
                                 heartbeat_target::done_fn done) {
      self->requests.push_back({origin, string_of(data), self->exec.elapsed()});
      auto c = self->requests.back();
      self->complete(std::move(done));
      if (self->on_request)
        self->exec.execute([self, c] { self->on_request(c); });
    };
    t.receive_heartbeat = [self](const resource_id& origin, payload data,
                                 heartbeat_target::done_fn done) {
      self->answers.push_back({origin, string_of(data), self->exec.elapsed()});
      self->complete(std::move(done));
    };
    return t;
  }
};

struct unit_fixture {
  std::shared_ptr<manual_executor> exec = std::make_shared<manual_executor>();
  recording_listener listener{"rm", [e = exec.get()] { return e->now(); }};
  heartbeat_config config; // Flink's defaults: 10 s, 50 s, 2

  std::shared_ptr<scripted_target> target() { return std::make_shared<scripted_target>(*exec); }

  std::chrono::nanoseconds at(const recording_listener::event& e) const {
    return e.at - time_point{};
  }
};

} // namespace

// -- configuration --------------------------------------------------------------------------------

TEST_CASE("heartbeat configuration defaults to Flink's values") {
  heartbeat_config c;
  CHECK(c.interval == 10s);
  CHECK(c.timeout == 50s);
  CHECK(c.rpc_failure_threshold == 2);
  CHECK(c.validate().has_value());
  CHECK(std::string(heartbeat_config::interval_key) == "heartbeat.interval");
  CHECK(std::string(heartbeat_config::timeout_key) == "heartbeat.timeout");
  CHECK(std::string(heartbeat_config::rpc_failure_threshold_key)
        == "heartbeat.rpc-failure-threshold");
}

TEST_CASE(
  "heartbeat configuration refuses a timeout not above the interval and non-positive values") {
  auto refused = [](heartbeat_config c, std::string mentions) {
    auto r = c.validate();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
    CHECK_MESSAGE(r.error().message.find(mentions) != std::string::npos, r.error().message);
  };
  heartbeat_config c;
  c.timeout = c.interval;
  refused(c, "heartbeat.timeout (10000 ms) must be larger than heartbeat.interval (10000 ms)");
  c.timeout = 5s;
  refused(c, "must be larger than heartbeat.interval");
  c = {};
  c.interval = 0ms;
  refused(c, "heartbeat.interval must be positive");
  c = {};
  c.timeout = -1ms;
  refused(c, "heartbeat.timeout must be positive");
  c = {};
  c.rpc_failure_threshold = 0;
  refused(c, "heartbeat.rpc-failure-threshold");
  c.rpc_failure_threshold = -2;
  refused(c, "heartbeat.rpc-failure-threshold");
  c.rpc_failure_threshold = -1; // disabled
  CHECK(c.validate().has_value());

  auto exec = std::make_shared<manual_executor>();
  recording_listener l("x", [] { return time_point{}; });
  heartbeat_config bad;
  bad.timeout = 1s;
  auto build = [&] { heartbeat_manager mgr(heartbeat_role::sender, "x", bad, l, exec); };
  CHECK_THROWS_AS(build(), std::invalid_argument);
}

TEST_CASE("heartbeat configuration reads Flink's keys in milliseconds") {
  auto c = heartbeat_config::from_settings({{"heartbeat.interval", "1000"},
                                            {"heartbeat.timeout", "5000"},
                                            {"heartbeat.rpc-failure-threshold", "-1"},
                                            {"rpc.ask.timeout", "whatever"}});
  REQUIRE(c.has_value());
  CHECK(c->interval == 1s);
  CHECK(c->timeout == 5s);
  CHECK(c->rpc_failure_threshold == -1);
  auto defaults = heartbeat_config::from_settings({});
  REQUIRE(defaults.has_value());
  CHECK(defaults->timeout == 50s);
  auto junk = heartbeat_config::from_settings({{"heartbeat.interval", "10 s"}});
  REQUIRE_FALSE(junk.has_value());
  CHECK(junk.error().message.find("heartbeat.interval") != std::string::npos);
  auto inverted = heartbeat_config::from_settings({{"heartbeat.timeout", "9000"}});
  REQUIRE_FALSE(inverted.has_value());
  CHECK(inverted.error().code == errc::invalid_argument);
}

// -- codec ----------------------------------------------------------------------------------------

TEST_CASE("heartbeat requests round trip and bad bytes give a clear error") {
  heartbeat_request req{"task_executor/tm-1", {'\0', 'x', '\xff'}};
  auto bytes = rpc::codec<heartbeat_request>::encode(req);
  auto back = rpc::codec<heartbeat_request>::decode(bytes);
  REQUIRE(back.has_value());
  CHECK(*back == req);
  auto empty = rpc::codec<heartbeat_request>::decode(rpc::codec<heartbeat_request>::encode({}));
  REQUIRE(empty.has_value());
  CHECK(empty->data.empty());
  bytes.resize(bytes.size() - 8);
  auto truncated = rpc::codec<heartbeat_request>::decode(bytes);
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.error().code == errc::malformed_message);
  CHECK(truncated.error().message.find("heartbeat request") != std::string::npos);
  CHECK(request_heartbeat_method::id >= 0x0100);
  CHECK(receive_heartbeat_method::id <= 0x01FF);
}

// -- monitor --------------------------------------------------------------------------------------

TEST_CASE_FIXTURE(unit_fixture, "a monitor reports a timeout exactly after the timeout, once") {
  auto m = heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, 2);
  exec->advance(49999ms);
  CHECK(listener.timeouts.empty());
  CHECK(m->current_state() == heartbeat_monitor::state::running);
  exec->advance(1ms);
  REQUIRE(listener.timeouts.size() == 1);
  CHECK(listener.timeouts[0].id == "tm-1");
  CHECK(at(listener.timeouts[0]) == 50s);
  CHECK(m->current_state() == heartbeat_monitor::state::timed_out);
  // A heartbeat after the timeout is remembered but does not revive the monitor.
  m->report_heartbeat();
  exec->advance(500s);
  CHECK(listener.timeouts.size() == 1);
  CHECK(m->last_heartbeat() == time_point{} + 50s);
}

TEST_CASE_FIXTURE(unit_fixture, "a heartbeat re-arms the monitor and stale timers do not fire") {
  auto m = heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, 2);
  CHECK_FALSE(m->last_heartbeat().has_value());
  for (int i = 0; i < 3; ++i) {
    exec->advance(10s);
    m->report_heartbeat();
  }
  CHECK(m->last_heartbeat() == time_point{} + 30s);
  // The timers armed at 0, 10 and 20 s fall due at 50, 60 and 70 s: all stale.
  exec->advance(49999ms);
  CHECK(listener.timeouts.empty());
  exec->advance(1ms);
  REQUIRE(listener.timeouts.size() == 1);
  CHECK(at(listener.timeouts[0]) == 80s);
}

TEST_CASE_FIXTURE(unit_fixture,
                  "consecutive rpc failures report unreachable, a success resets the run") {
  auto m = heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, 2);
  m->report_rpc_failure();
  m->report_rpc_success();
  m->report_rpc_failure();
  CHECK(m->failed_rpcs() == 1);
  CHECK(listener.unreachable.empty());
  exec->advance(3s);
  m->report_rpc_failure();
  REQUIRE(listener.unreachable.size() == 1);
  CHECK(listener.unreachable[0].id == "tm-1");
  CHECK(at(listener.unreachable[0]) == 3s);
  CHECK(m->current_state() == heartbeat_monitor::state::unreachable);
  m->report_rpc_failure();
  CHECK(listener.unreachable.size() == 1);
  // Unreachable is final: the pending timeout reports nothing.
  exec->advance(100s);
  CHECK(listener.timeouts.empty());
}

TEST_CASE_FIXTURE(unit_fixture, "a threshold of -1 never reports unreachable but still times out") {
  auto m = heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, -1);
  for (int i = 0; i < 10; ++i)
    m->report_rpc_failure();
  CHECK(listener.unreachable.empty());
  exec->advance(50s);
  CHECK(listener.timeouts.size() == 1);
}

TEST_CASE_FIXTURE(unit_fixture, "a cancelled monitor reports nothing") {
  auto m = heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, 1);
  m->cancel();
  m->report_rpc_failure();
  exec->advance(100s);
  CHECK(listener.timeouts.empty());
  CHECK(listener.unreachable.empty());
  CHECK(m->current_state() == heartbeat_monitor::state::canceled);
}

TEST_CASE_FIXTURE(unit_fixture, "timers of a destroyed monitor do nothing") {
  heartbeat_monitor::start("tm-1", {}, exec, listener, 50s, 2); // dropped at once
  CHECK(exec->pending_timers() == 1);
  exec->advance(100s);
  CHECK(listener.timeouts.empty());
}

// -- manager, sender role -------------------------------------------------------------------------

TEST_CASE_FIXTURE(
  unit_fixture, "a sender requests heartbeats from every target every interval with its payload") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  auto b = target();
  mgr.monitor_target("tm-a", scripted_target::make(a));
  mgr.monitor_target("tm-b", scripted_target::make(b));
  exec->run(); // the first round runs at once
  exec->advance(20s);
  REQUIRE(a->requests.size() == 3);
  REQUIRE(b->requests.size() == 3);
  CHECK(a->requests[0].at == 0s);
  CHECK(a->requests[1].at == 10s);
  CHECK(a->requests[2].at == 20s);
  CHECK(a->requests[0].origin == "rm");
  CHECK(a->requests[2].data == "rm->tm-a#3");
  CHECK(b->requests[1].data == "rm->tm-b#2");
  CHECK(mgr.is_monitoring("tm-a"));
  CHECK_THROWS_AS(mgr.monitor_target("tm-c", heartbeat_target{}), std::invalid_argument);
  CHECK_FALSE(mgr.is_monitoring("tm-c"));
  CHECK_FALSE(mgr.last_heartbeat_from("tm-a").has_value());
  CHECK_FALSE(mgr.last_heartbeat_from("unknown").has_value());
}

TEST_CASE_FIXTURE(unit_fixture,
                  "a sender reports answers' payloads and the target that stops answering") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  auto b = target();
  a->on_request = [&](const scripted_target::call& c) {
    mgr.receive_heartbeat("tm-a", bytes_of("report of tm-a for " + c.data));
  };
  bool b_answers = true;
  b->on_request = [&](const scripted_target::call&) {
    if (b_answers)
      mgr.receive_heartbeat("tm-b", {});
  };
  mgr.monitor_target("tm-a", scripted_target::make(a));
  mgr.monitor_target("tm-b", scripted_target::make(b));
  exec->run();
  exec->advance(30s);
  b_answers = false; // last answer at 30 s
  CHECK(mgr.last_heartbeat_from("tm-b") == time_point{} + 30s);
  exec->advance(49999ms);
  CHECK(listener.timeouts.empty());
  exec->advance(1ms);
  REQUIRE(listener.timeouts.size() == 1);
  CHECK(listener.timeouts[0].id == "tm-b");
  CHECK(at(listener.timeouts[0]) == 80s);
  exec->advance(300s);
  CHECK(listener.timeouts.size() == 1); // tm-a keeps answering
  REQUIRE_FALSE(listener.payloads.empty());
  CHECK(listener.payloads[0].id == "tm-a");
  CHECK(listener.payloads[0].data == "report of tm-a for rm->tm-a#1");
  for (auto& p : listener.payloads)
    CHECK(p.id == "tm-a"); // an empty payload is not reported
  CHECK(mgr.last_heartbeat_from("tm-a") == time_point{} + 380s);
}

TEST_CASE_FIXTURE(unit_fixture,
                  "only unreachable rpc failures count, and a success in between resets them") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  auto unreachable = [] { return expected<unit>(make_error(errc::unreachable, "gone")); };
  auto timeout = [] { return expected<unit>(make_error(errc::timeout, "slow")); };
  // Rounds at 0..60 s: fail, ok, fail, ok, timeout, timeout, fail, fail.
  a->script = {unreachable(), unit{},    unreachable(), unit{},
               timeout(),     timeout(), unreachable(), unreachable()};
  a->on_request = [&](const scripted_target::call&) { mgr.receive_heartbeat("tm-a", {}); };
  mgr.monitor_target("tm-a", scripted_target::make(a));
  exec->run();
  exec->advance(60s);
  CHECK(listener.unreachable.empty());
  CHECK(mgr.monitor_of("tm-a")->failed_rpcs() == 1);
  exec->advance(10s);
  REQUIRE(listener.unreachable.size() == 1);
  CHECK(listener.unreachable[0].id == "tm-a");
  CHECK(at(listener.unreachable[0]) == 70s);
  exec->advance(200s);
  CHECK(listener.unreachable.size() == 1);
  CHECK(listener.timeouts.empty());
}

TEST_CASE_FIXTURE(unit_fixture,
                  "unmonitoring stops requests and reports, unmonitored origins are ignored") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  a->script = {make_error(errc::unreachable, "gone")};
  mgr.monitor_target("tm-a", scripted_target::make(a));
  exec->run();
  exec->advance(5s);
  mgr.unmonitor_target("tm-a");
  exec->advance(200s);
  CHECK(a->requests.size() == 1);
  CHECK(listener.timeouts.empty());
  CHECK(listener.unreachable.empty());
  CHECK_FALSE(mgr.is_monitoring("tm-a"));
  mgr.receive_heartbeat("tm-a", bytes_of("late"));
  mgr.request_heartbeat("tm-a", bytes_of("late"));
  CHECK(listener.payloads.empty());
  CHECK(a->answers.empty());
}

TEST_CASE_FIXTURE(unit_fixture,
                  "a listener may unmonitor and monitor again from inside a notification") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  listener.on_timeout = [&](const resource_id& id) {
    // Flink's reaction: disconnect, then the target registers again.
    mgr.unmonitor_target(id);
    mgr.monitor_target(id, scripted_target::make(a));
  };
  mgr.monitor_target("tm-a", scripted_target::make(a));
  exec->run();
  exec->advance(100s);
  REQUIRE(listener.timeouts.size() == 2);
  CHECK(at(listener.timeouts[0]) == 50s);
  CHECK(at(listener.timeouts[1]) == 100s);
  auto b = target();
  b->script = {make_error(errc::unreachable, "1"), make_error(errc::unreachable, "2")};
  listener.on_unreachable = [&](const resource_id& id) { mgr.unmonitor_target(id); };
  mgr.monitor_target("tm-b", scripted_target::make(b));
  exec->advance(20s);
  REQUIRE(listener.unreachable.size() == 1);
  CHECK_FALSE(mgr.is_monitoring("tm-b"));
}

TEST_CASE_FIXTURE(unit_fixture, "a stopped manager sends and reports nothing") {
  heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
  auto a = target();
  mgr.monitor_target("tm-a", scripted_target::make(a));
  exec->run();
  mgr.stop();
  CHECK(mgr.is_stopped());
  mgr.monitor_target("tm-b", scripted_target::make(a));
  CHECK_FALSE(mgr.is_monitoring("tm-a"));
  CHECK_FALSE(mgr.is_monitoring("tm-b"));
  exec->advance(200s);
  CHECK(a->requests.size() == 1);
  CHECK(listener.timeouts.empty());
}

TEST_CASE_FIXTURE(unit_fixture, "timers of a destroyed manager do nothing") {
  auto a = target();
  {
    heartbeat_manager mgr(heartbeat_role::sender, "rm", config, listener, exec);
    mgr.monitor_target("tm-a", scripted_target::make(a));
    exec->run();
  }
  exec->advance(200s);
  CHECK(a->requests.size() == 1);
  CHECK(listener.timeouts.empty());
}

// -- manager, receiver role -----------------------------------------------------------------------

TEST_CASE_FIXTURE(unit_fixture,
                  "a receiver answers requests with its payload and reports a sender that stops") {
  recording_listener tm_listener("tm-1", [e = exec.get()] { return e->now(); });
  heartbeat_manager mgr(heartbeat_role::receiver, "tm-1", config, tm_listener, exec);
  auto rm = target();
  mgr.monitor_target("rm", scripted_target::make(rm));
  exec->advance(60s);
  CHECK(rm->requests.empty()); // a receiver never asks
  REQUIRE(tm_listener.timeouts.size() == 1); // armed at 0, nobody asked
  CHECK(at(tm_listener.timeouts[0]) == 50s);

  mgr.unmonitor_target("rm");
  mgr.monitor_target("rm", scripted_target::make(rm)); // at 60 s
  for (int i = 0; i < 3; ++i) {
    exec->advance(10s);
    mgr.request_heartbeat("rm", bytes_of("request " + std::to_string(i)));
  }
  REQUIRE(rm->answers.size() == 3);
  CHECK(rm->answers[0].origin == "tm-1");
  CHECK(rm->answers[0].data == "tm-1->rm#1");
  CHECK(rm->answers[2].at == 90s);
  REQUIRE(tm_listener.payloads.size() == 3);
  CHECK(tm_listener.payloads[2].data == "request 2");
  CHECK(mgr.last_heartbeat_from("rm") == time_point{} + 90s);
  exec->advance(49999ms);
  CHECK(tm_listener.timeouts.size() == 1);
  exec->advance(1ms);
  REQUIRE(tm_listener.timeouts.size() == 2);
  CHECK(at(tm_listener.timeouts[1]) == 140s);
}

TEST_CASE_FIXTURE(unit_fixture, "a receiver counts unreachable answers too") {
  recording_listener tm_listener("tm-1", [e = exec.get()] { return e->now(); });
  heartbeat_manager mgr(heartbeat_role::receiver, "tm-1", config, tm_listener, exec);
  auto rm = target();
  rm->script = {make_error(errc::unreachable, "1"), make_error(errc::unreachable, "2")};
  mgr.monitor_target("rm", scripted_target::make(rm));
  mgr.request_heartbeat("rm", {});
  exec->run();
  CHECK(tm_listener.unreachable.empty());
  mgr.request_heartbeat("rm", {});
  exec->run();
  REQUIRE(tm_listener.unreachable.size() == 1);
  CHECK(tm_listener.unreachable[0].id == "rm");
}

TEST_CASE(
  "the peer heartbeat listener reports a lost peer with Flink's texts and passes payloads on") {
  std::vector<std::pair<std::string, std::string>> lost;
  peer_heartbeat_listener quiet(
    "The heartbeat of JobManager", "JobManager",
    [&](const resource_id& id, const std::string& cause) { lost.emplace_back(id, cause); });
  quiet.notify_heartbeat_timeout("jm-1");
  quiet.notify_target_unreachable("jm-2");
  REQUIRE(lost.size() == 2);
  CHECK(lost[0]
        == std::pair<std::string, std::string>{
          "jm-1", "The heartbeat of JobManager with id jm-1 timed out."});
  CHECK(lost[1]
        == std::pair<std::string, std::string>{"jm-2",
                                               "JobManager with id jm-2 is no longer reachable."});
  // Without payload functions nothing is sent and a received payload is dropped.
  CHECK(quiet.retrieve_payload("jm-1").empty());
  quiet.report_payload("jm-1", payload{'x'});

  std::vector<payload> reported;
  peer_heartbeat_listener chatty(
    "Heartbeat of TaskManager", "TaskManager", [](const resource_id&, const std::string&) {},
    [&](const resource_id&, const payload& data) { reported.push_back(data); },
    [](const resource_id& id) { return payload(id.begin(), id.end()); });
  chatty.report_payload("tm", payload{'a', 'b'});
  REQUIRE(reported.size() == 1);
  CHECK(reported[0] == payload{'a', 'b'});
  CHECK(chatty.retrieve_payload("tm") == payload{'t', 'm'});
}
