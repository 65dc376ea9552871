#include "runtime/node/node_metrics.hpp"

#include <spdlog/logger.h>

#include "runtime/metrics/process_metrics.hpp"
#include "runtime/metrics/prometheus_reporter.hpp"

namespace flint::node {

node_metrics::node_metrics() : registry_(metrics::metric_registry::make()) {}

node_metrics::~node_metrics() {
  stop_reporter();
}

void node_metrics::start_reporter(const common_settings& s, const std::string& bind_host,
                                  spdlog::logger& log) {
  for (const auto& warning : s.metrics_warnings)
    log.error("{}", warning);
  if (!s.prometheus_reporter || reporter_)
    return;
  auto host = bind_host.empty() ? std::string("0.0.0.0") : bind_host;
  auto started = metrics::prometheus_reporter::start(
    registry_, host, s.prometheus_port, metrics::text_options{s.prometheus_filter_label_values});
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

void node_metrics::add_process_figures(std::string scope, metrics::variables vars) {
  process_figures_ = registry_->add(metrics::process_collector(std::move(scope), std::move(vars)));
}

std::uint16_t node_metrics::reporter_port() const noexcept {
  return reporter_ ? reporter_->port() : 0;
}

} // namespace flint::node
