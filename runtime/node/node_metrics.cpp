#include "runtime/node/node_metrics.hpp"

#include <spdlog/logger.h>

#include "runtime/metrics/prometheus_reporter.hpp"

namespace flint::node {

node_metrics::node_metrics() : registry_(metrics::metric_registry::make()) {}

node_metrics::~node_metrics() {
  stop_reporter();
}

void node_metrics::start_reporter(const common_settings& s, const std::string& bind_host,
                                  spdlog::logger& log) {
  if (!s.prometheus_reporter || reporter_)
    return;
  auto host = bind_host.empty() ? std::string("0.0.0.0") : bind_host;
  auto started = metrics::prometheus_reporter::start(registry_, host, s.prometheus_port);
  if (!started) {
    log.error("Could not instantiate metrics reporter prom: {}", started.error().message);
    return;
  }
  reporter_ = std::move(*started);
  log.info("Started PrometheusReporter HTTP server on {}:{}.", host, reporter_->port());
}

void node_metrics::stop_reporter() {
  if (reporter_)
    reporter_->stop();
  reporter_.reset();
}

std::uint16_t node_metrics::reporter_port() const noexcept {
  return reporter_ ? reporter_->port() : 0;
}

} // namespace flint::node
