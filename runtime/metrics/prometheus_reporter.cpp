#include "runtime/metrics/prometheus_reporter.hpp"

#include <httplib.h>

#include "runtime/http/http_service.hpp"
#include "runtime/metrics/prometheus_text.hpp"

namespace flint::metrics {

struct prometheus_reporter::impl {
  std::unique_ptr<http::http_service> service;
};

expected<std::unique_ptr<prometheus_reporter>> prometheus_reporter::start(
  std::shared_ptr<metric_registry> registry, const std::string& host,
  const std::string& port_spec, text_options options) {
  auto server = std::make_unique<httplib::Server>();
  // A scrape is small; slow scrapers must not hold the threads forever.
  server->set_read_timeout(5, 0);
  server->set_write_timeout(5, 0);
  server->set_keep_alive_max_count(10);
  std::weak_ptr<metric_registry> weak = registry;
  server->Get(".*", [weak, options](const httplib::Request&, httplib::Response& res) {
    auto reg = weak.lock();
    res.set_content(reg ? to_prometheus_text(reg->collect(), options) : std::string{},
                    prometheus_content_type);
  });
  auto service = http::http_service::start(std::move(server), host, port_spec,
                                           "metrics.reporter.prom.port", "the PrometheusReporter");
  if (!service)
    return service.error();
  std::unique_ptr<prometheus_reporter> r(new prometheus_reporter);
  r->port_ = (*service)->port();
  r->impl_ = std::make_unique<impl>();
  r->impl_->service = std::move(*service);
  return r;
}

void prometheus_reporter::stop() {
  if (impl_ && impl_->service)
    impl_->service->stop();
}

prometheus_reporter::~prometheus_reporter() {
  stop();
}

} // namespace flint::metrics
