#include "runtime/config/job_configuration.hpp"

#include <chrono>

#include "runtime/config/config_options.hpp"

namespace flint::config {

expected<job_settings> job_configuration(const configuration& cfg, std::optional<int> parallelism) {
  job_settings out;
  auto p = cfg.get(options::parallelism_default);
  if (!p)
    return p.error();
  out["parallelism.default"] = std::to_string(parallelism ? *parallelism : *p);
  auto buffer_timeout = cfg.get(options::execution_buffer_timeout);
  if (!buffer_timeout)
    return buffer_timeout.error();
  // The API reads milliseconds.
  out["execution.buffer-timeout"] =
    std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(*buffer_timeout).count());
  for (const char* key : {"pipeline.max-parallelism", "pipeline.operator-chaining",
                          "execution.global-data-exchange-mode", "execution.runtime-mode",
                          "execution.checkpointing.interval",
                          "pipeline.auto-watermark-interval",
                          "pipeline.window.agg-phase-strategy"})
    if (auto v = cfg.get_raw(key))
      out[key] = *v;
  // The job's own recovery and checkpoint settings (`-D restart-strategy.type=fixed-delay`,
  // `-D state.backend.type=rocksdb`): the JobMaster reads them over the cluster's, and the
  // Dispatcher refuses a bad one naming the key.
  for (const auto& key : cfg.keys())
    if (key.starts_with("restart-strategy") || key == "jobmanager.execution.failover-strategy"
        || key.starts_with("execution.checkpointing.") || key.starts_with("state."))
      out[key] = *cfg.get_raw(key);
  return out;
}

} // namespace flint::config
