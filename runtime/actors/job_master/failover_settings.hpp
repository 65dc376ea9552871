#pragma once
/// A job's restart and failover strategies, read from the cluster's configuration with the job's
/// own settings over it (Flink: the job's ExecutionConfig restart strategy wins over
/// `restart-strategy.type` in the cluster's configuration).

#include "runtime/actors/job_master/scheduler/scheduler.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/graph/job_graph.hpp"

namespace flint::job_master {

struct failover_settings {
  std::shared_ptr<failover::restart_backoff_time_strategy> restart_strategy;
  failover_strategy_factory failover_strategy;
};

/// The cluster's configuration with the job's `job_configuration` entries over it.
config::configuration job_configuration(const config::configuration& cluster,
                                        const graph::job_graph& job);

/// Both strategies of `job`; errc::invalid_argument naming the key when a setting is bad (an
/// unknown strategy, negative attempts, a malformed duration). The Dispatcher calls it at
/// submission, so a bad job is refused before it runs.
expected<failover_settings> make_failover_settings(const config::configuration& cluster,
                                                   const graph::job_graph& job);

} // namespace flint::job_master
