#include "runtime/metrics/prometheus_reporter.hpp"

#include <atomic>
#include <charconv>
#include <thread>

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/metrics/prometheus_text.hpp"

namespace flint::metrics {

namespace {

expected<std::uint16_t> port_of(std::string_view s, const std::string& spec) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v > 65535)
    return make_error(errc::invalid_argument,
                      "metrics.reporter.prom.port: '" + spec
                        + "' is not a port or a range of ports (e.g. 9249 or 9250-9260)");
  return static_cast<std::uint16_t>(v);
}

/// httplib binds with SO_REUSEPORT, so its bind succeeds on a port another node's reporter
/// serves: a plain bind tells whether the port is really free.
bool port_free(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    return false;
  bool free = false;
  int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0) {
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    free = ::bind(fd, found->ai_addr, found->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return free;
}

} // namespace

expected<std::pair<std::uint16_t, std::uint16_t>> parse_port_range(const std::string& spec) {
  auto dash = spec.find('-');
  auto first = port_of(std::string_view(spec).substr(0, dash), spec);
  if (!first)
    return first.error();
  if (dash == std::string::npos)
    return std::make_pair(*first, *first);
  auto last = port_of(std::string_view(spec).substr(dash + 1), spec);
  if (!last)
    return last.error();
  if (*last < *first || *first == 0)
    return make_error(errc::invalid_argument,
                      "metrics.reporter.prom.port: '" + spec + "' is an empty range");
  return std::make_pair(*first, *last);
}

struct prometheus_reporter::impl {
  httplib::Server server;
  std::thread thread;
};

expected<std::unique_ptr<prometheus_reporter>> prometheus_reporter::start(
  std::shared_ptr<metric_registry> registry, const std::string& host,
  const std::string& port_spec) {
  auto range = parse_port_range(port_spec);
  if (!range)
    return range.error();
  std::unique_ptr<prometheus_reporter> r(new prometheus_reporter);
  r->impl_ = std::make_unique<impl>();
  auto& server = r->impl_->server;
  // A scrape is small; slow scrapers must not hold the threads forever.
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_keep_alive_max_count(10);
  std::weak_ptr<metric_registry> weak = registry;
  server.Get(".*", [weak](const httplib::Request&, httplib::Response& res) {
    auto reg = weak.lock();
    res.set_content(reg ? to_prometheus_text(reg->collect()) : std::string{},
                    prometheus_content_type);
  });
  int bound = -1;
  if (range->first == 0) {
    bound = server.bind_to_any_port(host);
  } else {
    for (unsigned p = range->first; p <= range->second && bound < 0; ++p)
      if (port_free(host, static_cast<std::uint16_t>(p)) && server.bind_to_port(host, static_cast<int>(p)))
        bound = static_cast<int>(p);
  }
  if (bound <= 0)
    return make_error(errc::unreachable, "Could not start the PrometheusReporter: no free port in "
                                           + port_spec + " on " + host);
  r->port_ = static_cast<std::uint16_t>(bound);
  auto ended = std::make_shared<std::atomic<bool>>(false);
  r->impl_->thread = std::thread([&server, ended] {
    server.listen_after_bind();
    *ended = true;
  });
  // httplib's stop() does nothing before the accept loop runs: wait for it (or for its end, should
  // it fail at once), so that a reporter stopped right after it started does not serve on forever.
  while (!server.is_running() && !*ended)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return r;
}

void prometheus_reporter::stop() {
  if (!impl_)
    return;
  impl_->server.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

prometheus_reporter::~prometheus_reporter() {
  stop();
}

} // namespace flint::metrics
