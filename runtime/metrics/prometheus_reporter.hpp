#pragma once
/// Flink's PrometheusReporter: an HTTP server (runtime/http) on `metrics.reporter.prom.port` (a
/// port, a range "9250-9260" or 0) that answers every GET with the registry's samples in the
/// text format. Its own threads; stopped by the destructor.

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/metrics/metric_registry.hpp"
#include "runtime/metrics/prometheus_text.hpp"

namespace flint::metrics {

class prometheus_reporter {
public:
  /// Binds `host` at the first free port of `port_spec` and starts serving.
  static expected<std::unique_ptr<prometheus_reporter>> start(
    std::shared_ptr<metric_registry> registry, const std::string& host,
    const std::string& port_spec, text_options options = {});
  ~prometheus_reporter();
  prometheus_reporter(const prometheus_reporter&) = delete;
  prometheus_reporter& operator=(const prometheus_reporter&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  void stop();

private:
  prometheus_reporter() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
  std::uint16_t port_ = 0;
};

} // namespace flint::metrics
