#pragma once
/// A node's metrics: its registry (tasks, the JobManager's figures) and, when
/// `metrics.reporter.prom.factory.class` is set, the Prometheus reporter at
/// `metrics.reporter.prom.port`. A reporter that cannot bind is logged and the node runs on
/// without it, as Flink does ("Could not instantiate metrics reporter prom").

#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/fwd.h>

#include "runtime/metrics/metric_registry.hpp"
#include "runtime/node/node_settings.hpp"

namespace flint::metrics {
class prometheus_reporter;
}

namespace flint::node {

class node_metrics {
public:
  node_metrics();
  ~node_metrics();
  node_metrics(const node_metrics&) = delete;
  node_metrics& operator=(const node_metrics&) = delete;

  const std::shared_ptr<metrics::metric_registry>& registry() const { return registry_; }
  /// Starts the reporter if the settings ask for one, on `bind_host` ("": all interfaces).
  void start_reporter(const common_settings& s, const std::string& bind_host,
                      spdlog::logger& log);
  void stop_reporter();
  /// The reporter's port; 0 when none runs.
  std::uint16_t reporter_port() const noexcept;
  /// Registers the process's `Status` figures (CPU load and time, threads, RSS) under `scope`.
  void add_process_figures(std::string scope, metrics::variables vars);

private:
  std::shared_ptr<metrics::metric_registry> registry_;
  metrics::registration process_figures_;
  std::unique_ptr<metrics::prometheus_reporter> reporter_;
};

} // namespace flint::node
