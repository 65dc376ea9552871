#pragma once
/// Flink's RestartStrategies: how a job recovers from a failed task, set per job with
/// `stream_execution_environment::set_restart_strategy`. Each is the job's own
/// `restart-strategy.*` settings (Flink's keys), read by the JobMaster over the cluster's.

#include <chrono>
#include <map>
#include <string>

namespace flint::api {

struct restart_strategy_configuration {
  /// Flink's keys and values, e.g. {"restart-strategy.type", "fixed-delay"}.
  std::map<std::string, std::string> settings;
};

namespace restart_strategies {

/// `restart-strategy.type: none`: the first failure fails the job.
restart_strategy_configuration no_restart();
/// `fixed-delay`: up to `attempts` restarts, each after `delay`.
restart_strategy_configuration fixed_delay_restart(int attempts, std::chrono::milliseconds delay);
/// `exponential-delay`: the delay starts at `initial_backoff`, grows by `multiplier` up to
/// `max_backoff`, and starts over after `reset_threshold` without failure; `jitter` in [0, 1].
restart_strategy_configuration exponential_delay_restart(std::chrono::milliseconds initial_backoff,
                                                         std::chrono::milliseconds max_backoff,
                                                         double multiplier,
                                                         std::chrono::milliseconds reset_threshold,
                                                         double jitter);
/// `failure-rate`: restarts after `delay` until more than `max_failures` fail within `interval`.
restart_strategy_configuration failure_rate_restart(int max_failures,
                                                    std::chrono::milliseconds interval,
                                                    std::chrono::milliseconds delay);

} // namespace restart_strategies
} // namespace flint::api
