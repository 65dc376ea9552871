#pragma once
/// Whether and after which delay failed tasks restart (Flink's RestartBackoffTimeStrategy and its
/// four implementations, with Flink 1.19's semantics), and the loader that picks one from Flink's
/// `restart-strategy.*` keys (Flink's RestartBackoffTimeStrategyFactoryLoader).
///
/// Plain C++ without a clock: the caller passes its time to `notify_failure`, and the readers
/// answer for that moment.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::job_master::failover {

/// Flink's RestartBackoffTimeStrategy. Time is given by the caller (a manual clock in tests).
class restart_backoff_time_strategy {
public:
  virtual ~restart_backoff_time_strategy() = default;
  /// Called once per failure before can_restart/backoff_time are read; `now` is the caller's
  /// clock. Returns Flink 1.19's "is new attempt": false when the failure was merged into the
  /// restart already pending (exponential-delay, within its backoff), true otherwise.
  virtual bool notify_failure(std::chrono::nanoseconds now) = 0;
  virtual bool can_restart() const = 0;
  /// The delay before the restart (valid after notify_failure when can_restart()).
  virtual std::chrono::milliseconds backoff_time() const = 0;
  /// Flink's toString, e.g.
  /// "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=10)".
  virtual std::string description() const = 0;
};

/// Never restarts ("none", "off", "disable").
class no_restart_backoff_time_strategy final : public restart_backoff_time_strategy {
public:
  bool notify_failure(std::chrono::nanoseconds now) override;
  bool can_restart() const override;
  std::chrono::milliseconds backoff_time() const override;
  std::string description() const override;
};

/// Restarts `max_attempts` times, each after the same delay.
class fixed_delay_restart_backoff_time_strategy final : public restart_backoff_time_strategy {
public:
  /// Preconditions (checked by the loader): `max_attempts >= 0`, `backoff >= 0`.
  fixed_delay_restart_backoff_time_strategy(std::int32_t max_attempts,
                                            std::chrono::milliseconds backoff);
  bool notify_failure(std::chrono::nanoseconds now) override;
  bool can_restart() const override;
  std::chrono::milliseconds backoff_time() const override;
  std::string description() const override;

private:
  std::int32_t max_attempts_;
  std::chrono::milliseconds backoff_;
  std::int64_t attempt_ = 0;
};

/// Restarts after the same delay as long as no more than `max_failures_per_interval` failures
/// fell within the last `failures_interval`.
class failure_rate_restart_backoff_time_strategy final : public restart_backoff_time_strategy {
public:
  /// Preconditions (checked by the loader): `max_failures_per_interval >= 1`,
  /// `failures_interval >= 1 ms`, `backoff >= 0`.
  failure_rate_restart_backoff_time_strategy(std::int32_t max_failures_per_interval,
                                             std::chrono::milliseconds failures_interval,
                                             std::chrono::milliseconds backoff);
  bool notify_failure(std::chrono::nanoseconds now) override;
  bool can_restart() const override;
  std::chrono::milliseconds backoff_time() const override;
  std::string description() const override;

private:
  std::int32_t max_failures_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds backoff_;
  /// Milliseconds of the last `max_failures_ + 1` failures, oldest first.
  std::deque<std::int64_t> failures_;
  std::int64_t now_ = 0;
};

/// The settings of the exponential-delay strategy; the initialisers are Flink 1.19's defaults.
struct exponential_delay_options {
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{60'000};
  double backoff_multiplier = 1.5;
  /// Time after the pending restart without a new failure that resets the backoff.
  std::chrono::milliseconds reset_backoff_threshold{3'600'000};
  /// The backoff varies randomly by up to this fraction of itself, both ways.
  double jitter_factor = 0.1;
  /// Restarts allowed until the backoff is reset; Flink's default is unbounded.
  std::int32_t attempts_before_reset_backoff = std::numeric_limits<std::int32_t>::max();
};

/// Restarts with a delay that grows by `backoff_multiplier` per attempt up to `max_backoff`,
/// back to `initial_backoff` once no failure came for `reset_backoff_threshold` after the last
/// restart. Failures before the pending restart is due are merged into it.
class exponential_delay_restart_backoff_time_strategy final : public restart_backoff_time_strategy {
public:
  /// Uniform doubles in [0, 1).
  using random_source = std::function<double()>;

  /// Preconditions (checked by the loader): 1 ms <= initial <= max, multiplier > 1,
  /// threshold >= 1 ms, jitter in [0, 1], attempts >= 1. An empty `random` draws from a
  /// std::mt19937 seeded by std::random_device.
  explicit exponential_delay_restart_backoff_time_strategy(exponential_delay_options options,
                                                           random_source random = {});
  bool notify_failure(std::chrono::nanoseconds now) override;
  bool can_restart() const override;
  std::chrono::milliseconds backoff_time() const override;
  std::string description() const override;

private:
  std::int64_t next_backoff_ms();

  exponential_delay_options options_;
  random_source random_;
  std::int32_t attempt_ = 0;
  /// When the pending (or last) restart is due, in the caller's milliseconds; none before the
  /// first failure.
  std::optional<std::int64_t> next_restart_;
  std::int64_t now_ = 0;
};

/// Reads Flink's keys from `config`; `checkpointing_enabled` decides the default when no type is
/// set (none without checkpointing; fixed-delay with unbounded attempts (INT_MAX) and 1 s delay
/// with it). `random` feeds exponential-delay's jitter (see its constructor). Errors are
/// errc::invalid_argument naming the key and the bad value.
expected<std::unique_ptr<restart_backoff_time_strategy>> make_restart_backoff_time_strategy(
  const config::configuration& config, bool checkpointing_enabled,
  std::function<double()> random = {});

} // namespace flint::job_master::failover
