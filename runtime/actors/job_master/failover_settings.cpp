#include "runtime/actors/job_master/failover_settings.hpp"

#include <algorithm>

#include "runtime/config/config_options.hpp"

namespace flint::job_master {

config::configuration job_configuration(const config::configuration& cluster,
                                        const graph::job_graph& job) {
  auto merged = cluster;
  const bool job_sets_restart = std::any_of(
    job.execution_config.job_configuration.begin(), job.execution_config.job_configuration.end(),
    [](const auto& entry) { return entry.first.starts_with("restart-strategy"); });
  if (job_sets_restart)
    // A strategy of the job's own replaces the cluster's whole: a cluster's fixed-delay
    // attempts must not leak into a job's exponential-delay.
    for (const auto& key : cluster.keys())
      if (key.starts_with("restart-strategy"))
        merged.remove(key);
  // The job's own keys under Flink's other names (execution.checkpointing.dir for
  // state.checkpoints.dir, pekko.* for rpc.*) land on the keys Flint reads, over the cluster's.
  config::configuration own;
  for (const auto& [key, value] : job.execution_config.job_configuration)
    own.set(key, value, "job " + job.job_id.to_string());
  (void)config::resolve_aliases(own); // the client warned about deprecated keys already
  for (const auto& key : own.keys())
    merged.set(key, *own.get_raw(key), own.origin(key));
  return merged;
}

expected<failover_settings> make_failover_settings(const config::configuration& cluster,
                                                   const graph::job_graph& job) {
  auto config = job_configuration(cluster, job);
  const bool checkpointing = job.checkpointing.interval > 0;
  auto restart = failover::make_restart_backoff_time_strategy(config, checkpointing);
  if (!restart)
    return restart.error();
  // The strategy is built over the scheduler's own graph, later; the key is checked now.
  auto kind = failover::read_failover_strategy(config);
  if (!kind)
    return kind.error();
  failover_settings settings;
  settings.restart_strategy = std::move(*restart);
  settings.failover_strategy = [kind = *kind](const graph::execution_graph& graph) {
    return failover::make_failover_strategy(kind, graph);
  };
  return settings;
}

} // namespace flint::job_master
