// Heartbeats between endpoints, driven message by message on the deterministic scheduler: a
// sender endpoint (a ResourceManager) and a receiver endpoint (a TaskExecutor) monitor each
// other through the generic heartbeat methods; time moves only in steps the test chooses.

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>

#include <caf/all.hpp>

#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_monitor.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "test/runtime/actors/heartbeat/recording_listener.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::heartbeat;
using namespace flint::heartbeat::test;
using namespace std::chrono_literals;
using flint::test::test_fixture;

namespace {

/// How the endpoint treats incoming heartbeat requests.
enum class answer_mode {
  /// Hand them to the manager, which answers with a heartbeat: a healthy peer.
  answer,
  /// Confirm the call but never answer with a heartbeat: alive, but its heartbeats are lost.
  ack_only,
  /// Never confirm the call: the asks time out.
  park,
};

/// An endpoint owning one heartbeat manager, serving the generic heartbeat methods.
class heartbeat_endpoint : public rpc::rpc_endpoint {
public:
  heartbeat_endpoint(caf::actor_config& cfg, rpc::endpoint_context ctx, heartbeat_role role,
                     heartbeat_config config = {})
    : rpc::rpc_endpoint(cfg, std::move(ctx)),
      listener(endpoint_id(), [this] { return clock().now(); }),
      role_(role),
      config_(config) {}

  recording_listener listener;
  std::optional<heartbeat_manager> manager;
  answer_mode mode = answer_mode::answer;
  std::vector<rpc::reply_to<rpc::ack>> parked;

protected:
  void on_start() override {
    manager.emplace(role_, endpoint_id(), config_, listener, *this);
    handle_async<request_heartbeat_method>(
      rpc::fencing::unfenced,
      [this, serve = serve_request_heartbeat(*manager)](heartbeat_request req,
                                                        rpc::reply_to<rpc::ack> reply) mutable {
        switch (mode) {
          case answer_mode::answer: reply(serve(std::move(req))); break;
          case answer_mode::ack_only: reply(rpc::ack{}); break;
          case answer_mode::park: parked.push_back(std::move(reply)); break;
        }
      });
    handle<receive_heartbeat_method>(rpc::fencing::unfenced, serve_receive_heartbeat(*manager));
  }

private:
  heartbeat_role role_;
  heartbeat_config config_;
};

struct heartbeat_fixture : test_fixture {
  time_point start = sched.clock().now();
  caf::actor rm = spawn<heartbeat_endpoint>(context("resource_manager"), heartbeat_role::sender);
  caf::actor tm =
    spawn<heartbeat_endpoint>(context("task_executor/tm-1"), heartbeat_role::receiver);

  heartbeat_fixture() { run(); }

  static heartbeat_endpoint& ep(const caf::actor& a) { return deref<heartbeat_endpoint>(a); }

  /// `self` starts monitoring `other` through the generic heartbeat methods (gateway `gw`, or one
  /// to `other` itself).
  void monitor(const caf::actor& self, const caf::actor& other,
               std::optional<heartbeat_target> target = std::nullopt) {
    auto other_id = ep(other).endpoint_id();
    in_main_thread<heartbeat_endpoint>(self, [other, other_id, target](heartbeat_endpoint& s) {
      s.manager->monitor_target(
        other_id, target ? *target : make_heartbeat_target(rpc::gateway(other, other_id), s));
    });
    run();
  }

  void in(const caf::actor& a, std::function<void(heartbeat_endpoint&)> f) {
    in_main_thread<heartbeat_endpoint>(a, std::move(f));
    run();
  }

  std::chrono::nanoseconds elapsed() const { return sched.clock().now() - start; }

  /// Moves time to `t` (since the fixture started) in steps of at most `step`, so that every
  /// periodic timer fires at its own due time (one big advance fires a re-arming timer once).
  void step_to(std::chrono::nanoseconds t, std::chrono::nanoseconds step = 1s) {
    while (elapsed() < t)
      advance(std::min<std::chrono::nanoseconds>(step, t - elapsed()));
  }

  std::chrono::nanoseconds at(const recording_listener::event& e) const { return e.at - start; }

  std::int64_t start_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(start.time_since_epoch()).count();
  }

  /// Trace records of `method` in direction `dir` sent by `from` (any sender when empty) at or
  /// after `since`.
  int count(trace::direction dir, const std::string& method, const std::string& from = {},
            std::chrono::nanoseconds since = 0s,
            std::optional<trace::outcome> result = std::nullopt) const {
    auto since_us =
      start_us() + std::chrono::duration_cast<std::chrono::microseconds>(since).count();
    int n = 0;
    for (auto& r : trace())
      if (r.dir == dir && r.method == method && (from.empty() || r.from == from)
          && r.time_us >= since_us && (!result || r.result == *result))
        ++n;
    return n;
  }
};

const std::string rm_id = "resource_manager";
const std::string tm_id = "task_executor/tm-1";

} // namespace

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "a target that keeps answering is never reported and payloads travel both ways") {
  monitor(rm, tm);
  monitor(tm, rm);
  step_to(300s);
  CHECK(ep(rm).listener.timeouts.empty());
  CHECK(ep(rm).listener.unreachable.empty());
  CHECK(ep(tm).listener.timeouts.empty());
  CHECK(ep(tm).listener.unreachable.empty());
  CHECK(ep(rm).manager->last_heartbeat_from(tm_id) == start + 300s);
  CHECK(ep(tm).manager->last_heartbeat_from(rm_id) == start + 300s);

  // The sender's first round ran before anything was monitored: rounds at 10, 20, ..., 300 s.
  auto& to_tm = ep(tm).listener.payloads;
  REQUIRE(to_tm.size() == 30);
  CHECK(to_tm[0].id == rm_id);
  CHECK(to_tm[0].data == rm_id + "->" + tm_id + "#1");
  CHECK(to_tm[0].at == start + 10s);
  auto& to_rm = ep(rm).listener.payloads;
  REQUIRE(to_rm.size() == 30);
  CHECK(to_rm[29].id == tm_id);
  CHECK(to_rm[29].data == tm_id + "->" + rm_id + "#30");

  using trace::direction;
  CHECK(count(direction::send, "request_heartbeat", rm_id) == 30);
  CHECK(count(direction::receive, "request_heartbeat", rm_id) == 30);
  CHECK(count(direction::send, "receive_heartbeat", tm_id) == 30);
  CHECK(count(direction::response, "receive_heartbeat", tm_id, 0s, trace::outcome::ok) == 30);
  CHECK(flint::test::contains_in_order(trace(),
                                       {{direction::send, "request_heartbeat"},
                                        {direction::receive, "request_heartbeat"},
                                        {direction::send, "receive_heartbeat"},
                                        {direction::receive, "receive_heartbeat"},
                                        {direction::response, "request_heartbeat"},
                                        {direction::response, "receive_heartbeat"}}));
}

TEST_CASE_FIXTURE(
  heartbeat_fixture,
  "a target that stops answering is reported after exactly the timeout, not before") {
  monitor(rm, tm);
  monitor(tm, rm);
  step_to(35s);
  ep(tm).mode = answer_mode::ack_only; // its last heartbeat answered the request at 30 s
  CHECK(ep(rm).manager->last_heartbeat_from(tm_id) == start + 30s);
  // Monitors armed at 0, 10 and 20 s fall due at 50, 60 and 70 s: stale, they must not fire.
  step_to(79s);
  CHECK(ep(rm).listener.timeouts.empty());
  advance(999ms);
  CHECK(ep(rm).listener.timeouts.empty());
  advance(1ms);
  REQUIRE(ep(rm).listener.timeouts.size() == 1);
  CHECK(ep(rm).listener.timeouts[0].id == tm_id);
  CHECK(at(ep(rm).listener.timeouts[0]) == 80s);
  // Once reported, a monitor stays quiet until the owner acts (unmonitors, reconnects).
  step_to(300s);
  CHECK(ep(rm).listener.timeouts.size() == 1);
  CHECK(ep(rm).listener.unreachable.empty());
  // The requests kept going and were confirmed; only the heartbeats were missing.
  using trace::direction;
  CHECK(count(direction::send, "request_heartbeat", rm_id, 40s) == 27);
  CHECK(count(direction::send, "receive_heartbeat", tm_id, 40s) == 0);
  CHECK(count(direction::send, "receive_heartbeat", tm_id) == 3);
}

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "a receiver reports a sender that stops requesting after exactly the timeout") {
  monitor(rm, tm);
  monitor(tm, rm);
  step_to(35s);
  in(rm, [](heartbeat_endpoint& self) { self.manager->stop(); }); // last request at 30 s
  step_to(79s);
  CHECK(ep(tm).listener.timeouts.empty());
  advance(1s);
  REQUIRE(ep(tm).listener.timeouts.size() == 1);
  CHECK(ep(tm).listener.timeouts[0].id == rm_id);
  CHECK(at(ep(tm).listener.timeouts[0]) == 80s);
  CHECK(ep(rm).listener.timeouts.empty()); // a stopped manager reports nothing
  CHECK(count(trace::direction::send, "request_heartbeat", rm_id, 31s) == 0);
  CHECK(count(trace::direction::receive, "receive_heartbeat", tm_id) == 3);
}

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "consecutive failed heartbeat rpcs to a dead target report it unreachable") {
  monitor(rm, tm);
  step_to(5s);
  caf::anon_send_exit(tm, caf::exit_reason::kill);
  run();
  // Requests at 10 s (first failure) and 20 s (second: the threshold of 2).
  step_to(19s);
  CHECK(ep(rm).listener.unreachable.empty());
  step_to(20s);
  REQUIRE(ep(rm).listener.unreachable.size() == 1);
  CHECK(ep(rm).listener.unreachable[0].id == tm_id);
  CHECK(at(ep(rm).listener.unreachable[0]) == 20s);
  CHECK(ep(rm).manager->monitor_of(tm_id)->current_state()
        == heartbeat_monitor::state::unreachable);
  // Reported once, and not reported as a timeout afterwards.
  step_to(120s);
  CHECK(ep(rm).listener.unreachable.size() == 1);
  CHECK(ep(rm).listener.timeouts.empty());
  CHECK(
    count(trace::direction::response, "request_heartbeat", rm_id, 0s, trace::outcome::unreachable)
    >= 2);
}

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "a successful heartbeat rpc between failures resets the count") {
  auto dead = spawn<heartbeat_endpoint>(context("task_executor/dead"), heartbeat_role::receiver);
  run();
  caf::anon_send_exit(dead, caf::exit_reason::kill);
  run();
  // The TaskExecutor's requests go to a dead actor while `broken` is set (a lost connection),
  // to the live one otherwise.
  auto broken = std::make_shared<bool>(false);
  auto& rm_ep = ep(rm);
  auto live = make_heartbeat_target(rpc::gateway(tm, tm_id), rm_ep);
  auto gone = make_heartbeat_target(rpc::gateway(dead, tm_id), rm_ep);
  heartbeat_target flaky = live;
  flaky.request_heartbeat = [broken, live, gone](const resource_id& origin, payload data,
                                                 heartbeat_target::done_fn done) {
    (*broken ? gone : live).request_heartbeat(origin, std::move(data), std::move(done));
  };
  monitor(rm, tm, flaky);
  monitor(tm, rm);
  // Rounds at 10..80 s: fail, ok, fail, ok, fail, ok, fail, fail.
  for (bool fail : {true, false, true, false, true, false, true}) {
    *broken = fail;
    step_to(elapsed() + 10s);
  }
  CHECK(ep(rm).listener.unreachable.empty());
  CHECK(ep(rm).manager->monitor_of(tm_id)->failed_rpcs() == 1);
  *broken = true;
  step_to(80s);
  REQUIRE(ep(rm).listener.unreachable.size() == 1);
  CHECK(at(ep(rm).listener.unreachable[0]) == 80s);
  CHECK(ep(rm).listener.timeouts.empty());
  CHECK(
    count(trace::direction::response, "request_heartbeat", rm_id, 0s, trace::outcome::unreachable)
    == 5);
  CHECK(count(trace::direction::response, "request_heartbeat", rm_id, 0s, trace::outcome::ok) == 3);
}

TEST_CASE_FIXTURE(heartbeat_fixture, "heartbeat rpcs that time out do not count as unreachable") {
  monitor(rm, tm);
  ep(tm).mode = answer_mode::park; // asks to it time out after rpc.ask.timeout (10 s)
  step_to(49s);
  CHECK(ep(rm).listener.unreachable.empty());
  CHECK(ep(rm).listener.timeouts.empty());
  step_to(50s);
  REQUIRE(ep(rm).listener.timeouts.size() == 1);
  CHECK(at(ep(rm).listener.timeouts[0]) == 50s);
  step_to(100s);
  CHECK(ep(rm).listener.unreachable.empty());
  CHECK(count(trace::direction::response, "request_heartbeat", rm_id, 0s, trace::outcome::timeout)
        >= 3);
}

TEST_CASE_FIXTURE(heartbeat_fixture, "an unmonitored target is neither asked nor reported") {
  monitor(rm, tm);
  monitor(tm, rm);
  ep(tm).mode = answer_mode::ack_only;
  step_to(25s);
  in(rm, [](heartbeat_endpoint& self) { self.manager->unmonitor_target(tm_id); });
  CHECK_FALSE(ep(rm).manager->is_monitoring(tm_id));
  step_to(200s);
  CHECK(ep(rm).listener.timeouts.empty());
  CHECK(ep(rm).listener.unreachable.empty());
  CHECK(count(trace::direction::send, "request_heartbeat", rm_id) == 2);
  CHECK(count(trace::direction::send, "request_heartbeat", rm_id, 26s) == 0);
  // An answer arriving after the unmonitor is confirmed and ignored.
  in(tm, [](heartbeat_endpoint& self) { self.manager->request_heartbeat(rm_id, {}); });
  CHECK(count(trace::direction::receive, "receive_heartbeat", tm_id, 200s) == 1);
  CHECK(ep(rm).listener.payloads.empty());
  CHECK_FALSE(ep(rm).manager->last_heartbeat_from(tm_id).has_value());
}

TEST_CASE_FIXTURE(test_fixture,
                  "the heartbeat manager must be used from its endpoint's main thread") {
  auto rm = spawn<heartbeat_endpoint>(context("resource_manager"), heartbeat_role::sender);
  run();
  auto& self = deref<heartbeat_endpoint>(rm);
  CHECK_THROWS_AS(self.manager->monitor_target("x", {}), std::logic_error);
  CHECK_THROWS_AS(self.manager->stop(), std::logic_error);
}
