// Restart strategies with a manual clock (Flink's *RestartBackoffTimeStrategyTest and
// RestartBackoffTimeStrategyFactoryLoaderTest).

#include "runtime/actors/job_master/failover/restart_backoff_time_strategy.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::job_master::failover;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

/// The caller's clock, moved by hand.
struct manual_clock {
  std::chrono::nanoseconds now{0};
  void advance(milliseconds d) { now += d; }
};

exponential_delay_options exponential(milliseconds initial, milliseconds max, double multiplier,
                                      milliseconds threshold, double jitter = 0) {
  exponential_delay_options o;
  o.initial_backoff = initial;
  o.max_backoff = max;
  o.backoff_multiplier = multiplier;
  o.reset_backoff_threshold = threshold;
  o.jitter_factor = jitter;
  return o;
}

/// Fails, then lets the restart happen and fails again 1 ms after it, `n` times; the delays.
std::vector<std::int64_t> delays_of_failures_right_after_restart(restart_backoff_time_strategy& s,
                                                                 manual_clock& clock, int n) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < n; ++i) {
    REQUIRE(s.notify_failure(clock.now));
    REQUIRE(s.can_restart());
    out.push_back(s.backoff_time().count());
    clock.advance(s.backoff_time() + 1ms);
  }
  return out;
}

/// Plays back fixed draws.
std::function<double()> draws(std::vector<double> values) {
  auto next = std::make_shared<std::size_t>(0);
  return [values = std::move(values), next] { return values[(*next)++ % values.size()]; };
}

config::configuration conf(std::vector<std::pair<std::string, std::string>> entries) {
  config::configuration c;
  for (auto& [k, v] : entries)
    c.set(k, v, "test");
  return c;
}

std::unique_ptr<restart_backoff_time_strategy> load(const config::configuration& c,
                                                    bool checkpointing = false) {
  auto s = make_restart_backoff_time_strategy(c, checkpointing, draws({0.5}));
  REQUIRE_MESSAGE(s.has_value(), s.error().to_string());
  return std::move(*s);
}

} // namespace

// -- exponential delay ---------------------------------------------------------------------------

TEST_CASE("exponential delay multiplies the backoff per failure up to the max backoff") {
  manual_clock clock;
  exponential_delay_restart_backoff_time_strategy s(exponential(10ms, 100ms, 2, 1000ms));
  CHECK(delays_of_failures_right_after_restart(s, clock, 6)
        == std::vector<std::int64_t>{10, 20, 40, 80, 100, 100});
}

TEST_CASE("exponential delay resets to the initial backoff after the threshold without failure") {
  manual_clock clock;
  exponential_delay_restart_backoff_time_strategy s(exponential(10ms, 100ms, 2, 1000ms));
  CHECK(delays_of_failures_right_after_restart(s, clock, 3)
        == std::vector<std::int64_t>{10, 20, 40});
  // The last restart was due 1 ms ago; the threshold counts from then.
  clock.advance(1000ms - 2ms);
  REQUIRE(s.notify_failure(clock.now));
  CHECK(s.backoff_time() == 80ms);

  clock.advance(80ms + 1000ms);
  REQUIRE(s.notify_failure(clock.now));
  CHECK(s.backoff_time() == 10ms);
  clock.advance(11ms);
  REQUIRE(s.notify_failure(clock.now));
  CHECK(s.backoff_time() == 20ms);
}

TEST_CASE("exponential delay merges failures before the pending restart into one attempt") {
  manual_clock clock;
  exponential_delay_restart_backoff_time_strategy s(exponential(10ms, 100ms, 2, 1000ms));
  CHECK(s.notify_failure(clock.now));
  CHECK(s.backoff_time() == 10ms);
  clock.advance(4ms);
  CHECK_FALSE(s.notify_failure(clock.now));
  CHECK(s.can_restart());
  CHECK(s.backoff_time() == 6ms);
  clock.advance(6ms);
  CHECK_FALSE(s.notify_failure(clock.now));
  clock.advance(1ms);
  CHECK(s.notify_failure(clock.now));
  CHECK(s.backoff_time() == 20ms);
}

TEST_CASE(
  "exponential delay gives up after attempts-before-reset-backoff until the backoff resets") {
  manual_clock clock;
  auto o = exponential(10ms, 100ms, 2, 1000ms);
  o.attempts_before_reset_backoff = 2;
  exponential_delay_restart_backoff_time_strategy s(o);
  CHECK(delays_of_failures_right_after_restart(s, clock, 2) == std::vector<std::int64_t>{10, 20});
  s.notify_failure(clock.now);
  CHECK_FALSE(s.can_restart());

  // A job that then runs for the threshold gets its attempts back.
  clock.advance(s.backoff_time() + 1000ms);
  s.notify_failure(clock.now);
  CHECK(s.can_restart());
  CHECK(s.backoff_time() == 10ms);
}

TEST_CASE("exponential delay jitter stays within the jitter factor of the backoff") {
  // Draws 0 and almost 1 are the ends of Flink's [-offset, offset]; 0.5 is the middle.
  auto run = [](double draw) {
    manual_clock clock;
    exponential_delay_restart_backoff_time_strategy s(exponential(100ms, 1000ms, 2, 10'000ms, 0.1),
                                                      draws({draw}));
    return delays_of_failures_right_after_restart(s, clock, 5);
  };
  // 100 cannot go below the initial backoff; 1600 +- 160 is above the max either way.
  CHECK(run(0.0) == std::vector<std::int64_t>{100, 180, 360, 720, 1000});
  CHECK(run(0.5) == std::vector<std::int64_t>{100, 200, 400, 800, 1000});
  CHECK(run(0.999999) == std::vector<std::int64_t>{110, 220, 440, 880, 1000});

  manual_clock clock;
  exponential_delay_restart_backoff_time_strategy seeded(
    exponential(100ms, 1000ms, 2, 10'000ms, 0.1));
  for (int i = 0; i < 50; ++i) {
    seeded.notify_failure(clock.now); // the first attempt, or the first after a reset
    clock.advance(seeded.backoff_time() + 1ms);
    seeded.notify_failure(clock.now);
    CHECK(seeded.backoff_time() >= 180ms);
    CHECK(seeded.backoff_time() <= 220ms);
    clock.advance(seeded.backoff_time() + 10'000ms);
  }
}

TEST_CASE("exponential delay describes itself as Flink does") {
  manual_clock clock;
  exponential_delay_restart_backoff_time_strategy s(exponential(10ms, 100ms, 2, 1000ms));
  CHECK(s.description()
        == "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=10, maxBackoffMS=100, "
           "backoffMultiplier=2.0, resetBackoffThresholdMS=1000, jitterFactor=0.0, "
           "attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0, "
           "nextRestartTimestamp=-2147483648)");
  clock.advance(5ms);
  s.notify_failure(clock.now);
  CHECK(s.description().ends_with("currentRestartAttempt=1, nextRestartTimestamp=15)"));
}

// -- fixed delay and failure rate ----------------------------------------------------------------

TEST_CASE("fixed delay restarts the configured number of times and then gives up") {
  fixed_delay_restart_backoff_time_strategy s(3, 10ms);
  CHECK(s.description()
        == "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=10)");
  for (int i = 0; i < 3; ++i) {
    s.notify_failure(std::chrono::nanoseconds{0});
    CHECK(s.can_restart());
    CHECK(s.backoff_time() == 10ms);
  }
  s.notify_failure(std::chrono::nanoseconds{0});
  CHECK_FALSE(s.can_restart());
}

TEST_CASE("fixed delay with zero attempts never restarts") {
  fixed_delay_restart_backoff_time_strategy s(0, 10ms);
  s.notify_failure(std::chrono::nanoseconds{0});
  CHECK_FALSE(s.can_restart());
}

TEST_CASE("failure rate gives up at the first failure beyond the limit within the interval") {
  manual_clock clock;
  failure_rate_restart_backoff_time_strategy s(2, 1000ms, 5ms);
  s.notify_failure(clock.now);
  CHECK(s.can_restart());
  CHECK(s.backoff_time() == 5ms);
  clock.advance(100ms);
  s.notify_failure(clock.now);
  CHECK(s.can_restart());
  clock.advance(900ms);
  // Three failures in exactly the interval (0, 100, 1000): one too many.
  s.notify_failure(clock.now);
  CHECK_FALSE(s.can_restart());
}

TEST_CASE("failures older than the failure-rate interval no longer count") {
  manual_clock clock;
  failure_rate_restart_backoff_time_strategy s(2, 1000ms, 5ms);
  s.notify_failure(clock.now); // 0
  clock.advance(100ms);
  s.notify_failure(clock.now); // 100
  clock.advance(1001ms);
  s.notify_failure(clock.now); // 1101: the one at 0 is out of the interval
  CHECK(s.can_restart());
  clock.advance(49ms);
  s.notify_failure(clock.now); // 1150: the one at 100 is out too
  CHECK(s.can_restart());
  clock.advance(50ms);
  s.notify_failure(clock.now); // 1200: 1101, 1150, 1200 are within 1000 ms
  CHECK_FALSE(s.can_restart());
  CHECK(s.description()
        == "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=1000,backoffTimeMS=5,"
           "maxFailuresPerInterval=2)");
}

TEST_CASE("no restart never restarts") {
  no_restart_backoff_time_strategy s;
  s.notify_failure(std::chrono::nanoseconds{0});
  CHECK_FALSE(s.can_restart());
  CHECK(s.description() == "NoRestartBackoffTimeStrategy");
}

// -- loading from the configuration -------------------------------------------------------------

TEST_CASE("without a restart strategy a job without checkpointing does not restart") {
  auto s = load(conf({}), false);
  CHECK(s->description() == "NoRestartBackoffTimeStrategy");
  s->notify_failure(std::chrono::nanoseconds{0});
  CHECK_FALSE(s->can_restart());
}

TEST_CASE("without a restart strategy a checkpointing job restarts every second without bound") {
  auto s = load(conf({}), true);
  CHECK(
    s->description()
    == "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=2147483647, backoffTimeMS=1000)");
}

TEST_CASE("a configured restart strategy wins over the checkpointing default") {
  CHECK(load(conf({{"restart-strategy.type", "none"}}), true)->description()
        == "NoRestartBackoffTimeStrategy");
}

TEST_CASE("every restart strategy name and alias selects its strategy in any case") {
  const std::vector<std::pair<std::string, std::string>> cases{
    {"none", "NoRestartBackoffTimeStrategy"},
    {"off", "NoRestartBackoffTimeStrategy"},
    {"disable", "NoRestartBackoffTimeStrategy"},
    {"None", "NoRestartBackoffTimeStrategy"},
    {"fixed-delay",
     "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"},
    {"fixeddelay",
     "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"},
    {"FIXED-DELAY",
     "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)"},
    {"failure-rate",
     "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000,backoffTimeMS=1000,maxFailuresPerInterval=1)"},
    {"failurerate",
     "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000,backoffTimeMS=1000,maxFailuresPerInterval=1)"},
    {"exponential-delay",
     "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0, nextRestartTimestamp=-2147483648)"},
    {"ExponentialDelay",
     "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0, nextRestartTimestamp=-2147483648)"},
  };
  for (const auto& [type, description] : cases) {
    CAPTURE(type);
    CHECK(load(conf({{"restart-strategy.type", type}}))->description() == description);
  }
}

TEST_CASE("the older restart-strategy key is read when restart-strategy.type is unset") {
  CHECK(load(conf({{"restart-strategy", "fixed-delay"},
                   {"restart-strategy.fixed-delay.attempts", "4"}}))
          ->description()
        == "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=4, backoffTimeMS=1000)");
  CHECK(load(conf({{"restart-strategy", "fixed-delay"}, {"restart-strategy.type", "none"}}))
          ->description()
        == "NoRestartBackoffTimeStrategy");
}

TEST_CASE("configured restart strategy settings reach the strategy") {
  CHECK(load(conf({{"restart-strategy.type", "fixed-delay"},
                   {"restart-strategy.fixed-delay.attempts", "3"},
                   {"restart-strategy.fixed-delay.delay", "10 ms"}}))
          ->description()
        == "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=10)");
  CHECK(
    load(conf({{"restart-strategy.type", "failure-rate"},
               {"restart-strategy.failure-rate.max-failures-per-interval", "3"},
               {"restart-strategy.failure-rate.failure-rate-interval", "5 min"},
               {"restart-strategy.failure-rate.delay", "2 s"}}))
      ->description()
    == "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=300000,backoffTimeMS=2000,maxFailuresPerInterval=3)");

  auto s = load(conf({{"restart-strategy.type", "exponential-delay"},
                      {"restart-strategy.exponential-delay.initial-backoff", "10 ms"},
                      {"restart-strategy.exponential-delay.max-backoff", "100"},
                      {"restart-strategy.exponential-delay.backoff-multiplier", "2"},
                      {"restart-strategy.exponential-delay.reset-backoff-threshold", "1 s"},
                      {"restart-strategy.exponential-delay.jitter-factor", "0"},
                      {"restart-strategy.exponential-delay.attempts-before-reset-backoff", "10"}}));
  CHECK(s->description().starts_with(
    "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=10, maxBackoffMS=100, "
    "backoffMultiplier=2.0, resetBackoffThresholdMS=1000, jitterFactor=0.0, "
    "attemptsBeforeResetBackoff=10,"));
  manual_clock clock;
  CHECK(delays_of_failures_right_after_restart(*s, clock, 6)
        == std::vector<std::int64_t>{10, 20, 40, 80, 100, 100});
}

TEST_CASE("every bad restart strategy setting is an error naming the key and the value") {
  struct bad_case {
    std::string type;
    std::string key;
    std::string value;
  };
  const std::vector<bad_case> cases{
    {"", "restart-strategy.type", "foo"},
    {"", "restart-strategy", "sometimes"},
    {"fixed-delay", "restart-strategy.fixed-delay.attempts", "-1"},
    {"fixed-delay", "restart-strategy.fixed-delay.attempts", "three"},
    {"fixed-delay", "restart-strategy.fixed-delay.attempts", "3000000000"},
    {"fixed-delay", "restart-strategy.fixed-delay.delay", "-1 s"},
    {"fixed-delay", "restart-strategy.fixed-delay.delay", "ten seconds"},
    {"failure-rate", "restart-strategy.failure-rate.max-failures-per-interval", "0"},
    {"failure-rate", "restart-strategy.failure-rate.max-failures-per-interval", "-2"},
    {"failure-rate", "restart-strategy.failure-rate.failure-rate-interval", "0 ms"},
    {"failure-rate", "restart-strategy.failure-rate.failure-rate-interval", "-5 s"},
    {"failure-rate", "restart-strategy.failure-rate.delay", "soon"},
    {"exponential-delay", "restart-strategy.exponential-delay.initial-backoff", "0 ms"},
    {"exponential-delay", "restart-strategy.exponential-delay.initial-backoff", "-1 s"},
    {"exponential-delay", "restart-strategy.exponential-delay.max-backoff", "0"},
    {"exponential-delay", "restart-strategy.exponential-delay.backoff-multiplier", "0.5"},
    {"exponential-delay", "restart-strategy.exponential-delay.backoff-multiplier", "1"},
    {"exponential-delay", "restart-strategy.exponential-delay.backoff-multiplier", "double"},
    {"exponential-delay", "restart-strategy.exponential-delay.reset-backoff-threshold", "0 s"},
    {"exponential-delay", "restart-strategy.exponential-delay.jitter-factor", "1.5"},
    {"exponential-delay", "restart-strategy.exponential-delay.jitter-factor", "-0.1"},
    {"exponential-delay", "restart-strategy.exponential-delay.jitter-factor", "nan"},
    {"exponential-delay", "restart-strategy.exponential-delay.attempts-before-reset-backoff", "0"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.key);
    CAPTURE(c.value);
    std::vector<std::pair<std::string, std::string>> entries{{c.key, c.value}};
    if (!c.type.empty())
      entries.emplace_back("restart-strategy.type", c.type);
    auto s = make_restart_backoff_time_strategy(conf(entries), false);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == errc::invalid_argument);
    const auto& message = s.error().message;
    bool names_key = message.find("'" + c.key + "'") != std::string::npos
      || message.find(" " + c.key + " ") != std::string::npos;
    CHECK_MESSAGE(names_key, message);
    CHECK(s.error().message.find("'" + c.value + "'") != std::string::npos);
  }
}

TEST_CASE("an unknown restart strategy is refused with Flink's words and the accepted names") {
  auto s = make_restart_backoff_time_strategy(conf({{"restart-strategy.type", "foo"}}), true);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().message.starts_with(
    "Unknown restart strategy 'foo' in restart-strategy.type (set in test)"));
  CHECK(s.error().message.find("exponential-delay") != std::string::npos);
}

TEST_CASE("an initial backoff above the max backoff is an error naming both keys") {
  auto s = make_restart_backoff_time_strategy(
    conf({{"restart-strategy.type", "exponential-delay"},
          {"restart-strategy.exponential-delay.initial-backoff", "2 min"}}),
    false);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(s.error().message
        == "restart-strategy.exponential-delay.initial-backoff (2 min) must not exceed "
           "restart-strategy.exponential-delay.max-backoff (1 min)");
}
