// Retrying registration's back-off, driven on the manual clock.

#include <doctest/doctest.h>

#include <deque>

#include <caf/all.hpp>

#include "runtime/actors/registration/retrying_registration.hpp"
#include "runtime/actors/rpc/echo_gateway.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::rpc;
using namespace flint::registration;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

/// How the fake target answers each attempt, in order; after the script it keeps the last one.
enum class answer { silent, decline, error, accept };

struct registration_fixture : test_fixture {
  std::deque<answer> script;
  answer last = answer::silent;
  std::vector<std::chrono::nanoseconds> attempt_times; // manual-clock time of each arrival
  std::vector<std::chrono::nanoseconds> attempt_timeouts;
  std::optional<std::string> registered;
  std::unique_ptr<retrying_registration<std::string>> reg;

  caf::actor target =
    spawn<fake_endpoint>(context("resource_manager"), [this](fake_endpoint& self) {
      self.on_async<echo_method>(
        fencing::unfenced, [this](echo_request req, reply_to<echo_response> reply) mutable {
          attempt_times.push_back(sched.clock().now().time_since_epoch());
          auto a = last;
          if (!script.empty()) {
            a = script.front();
            script.pop_front();
          }
          last = a;
          switch (a) {
            case answer::silent: break; // never answers: the attempt times out
            case answer::decline: reply(echo_response{"decline", {}, "rm"}); break;
            case answer::error:
              reply(make_error(errc::internal, "resource manager is starting"));
              break;
            case answer::accept: reply(echo_response{"ok:" + req.text, {}, "rm"}); break;
          }
        });
    });
  caf::actor owner = spawn<fake_endpoint>(context("task_executor"));

  registration_fixture() { run(); }

  std::chrono::nanoseconds now() const { return sched.clock().now().time_since_epoch(); }

  void start() {
    auto gw = gateway(target, "resource_manager");
    in_main_thread<fake_endpoint>(owner, [this, gw](fake_endpoint& self) {
      reg = std::make_unique<retrying_registration<std::string>>(
        self, "resource_manager", retrying_registration_config{},
        [this, gw, &self](std::chrono::nanoseconds timeout, auto done) {
          attempt_timeouts.push_back(timeout);
          gw.ask<echo_method>(
            self, echo_request{"tm-1", {}},
            [done](expected<echo_response> r) {
              if (!r)
                done(r.error());
              else if (r->text == "decline")
                done(registration_response<std::string>{registration_decline{"no slots wanted"}});
              else
                done(registration_response<std::string>{r->text});
            },
            timeout);
        },
        [this](std::string id) { registered = id; });
      reg->start();
    });
    run();
  }
};

} // namespace

TEST_CASE_FIXTURE(registration_fixture,
                  "timed-out attempts retry at once with a doubling timeout capped at 30 s") {
  last = answer::silent;
  start();
  std::vector<std::chrono::nanoseconds> expected_timeouts;
  auto t = std::chrono::nanoseconds(100ms);
  for (int i = 0; i < 12; ++i) {
    expected_timeouts.push_back(t);
    t = std::min<std::chrono::nanoseconds>(t * 2, 30s);
  }
  CHECK(expected_timeouts.back() == 30s); // 100 ms * 2^9 > 30 s: the cap is reached
  for (size_t i = 0; i + 1 < expected_timeouts.size(); ++i) {
    REQUIRE(attempt_timeouts.size() == i + 1);
    advance(expected_timeouts[i] - 1ms);
    CHECK(attempt_timeouts.size() == i + 1); // not before the timeout
    advance(1ms);
  }
  REQUIRE(attempt_timeouts.size() == expected_timeouts.size());
  CHECK(attempt_timeouts == expected_timeouts);
  CHECK(reg->last_failure().find("timeout") == 0);
  CHECK_FALSE(registered.has_value());
}

TEST_CASE_FIXTURE(registration_fixture,
                  "a declined attempt retries after 30 s and an error after 10 s") {
  script = {answer::decline, answer::error, answer::accept};
  start();
  REQUIRE(attempt_times.size() == 1);
  CHECK(reg->last_failure() == "declined: no slots wanted");
  advance(30s - 1ms);
  CHECK(attempt_times.size() == 1);
  advance(1ms);
  REQUIRE(attempt_times.size() == 2);
  CHECK(attempt_times[1] - attempt_times[0] == 30s);
  CHECK(reg->last_failure().find("internal") == 0);
  advance(10s - 1ms);
  CHECK(attempt_times.size() == 2);
  advance(1ms);
  REQUIRE(attempt_times.size() == 3);
  CHECK(attempt_times[2] - attempt_times[1] == 10s);
  REQUIRE(registered.has_value());
  CHECK(*registered == "ok:tm-1");
  CHECK(reg->succeeded());
  CHECK(reg->attempts() == 3);
  // Retry timeouts restart from the initial value after a decline or an error.
  CHECK(attempt_timeouts == std::vector<std::chrono::nanoseconds>{100ms, 100ms, 100ms});
  // Nothing more happens after success.
  advance(60s);
  CHECK(attempt_times.size() == 3);
}

TEST_CASE_FIXTURE(registration_fixture, "a cancelled registration makes no further attempt") {
  script = {answer::decline};
  last = answer::accept;
  start();
  REQUIRE(attempt_times.size() == 1);
  in_main_thread<fake_endpoint>(owner, [this](fake_endpoint&) { reg->cancel(); });
  run();
  advance(31s);
  CHECK(attempt_times.size() == 1);
  CHECK_FALSE(registered.has_value());
  CHECK(reg->canceled());
}

TEST_CASE_FIXTURE(registration_fixture, "a late answer to a cancelled attempt is ignored") {
  script = {};
  last = answer::silent;
  start();
  in_main_thread<fake_endpoint>(owner, [this](fake_endpoint&) { reg->cancel(); });
  run();
  advance(100ms); // the running attempt times out: no retry
  CHECK(attempt_times.size() == 1);
  advance(10s);
  CHECK(attempt_times.size() == 1);
}
