#include "runtime/http/http_service.hpp"

#include <atomic>
#include <charconv>
#include <chrono>
#include <thread>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/http/httplib.hpp"

namespace flint::http {

namespace {

expected<std::uint16_t> port_of(std::string_view s, const std::string& spec,
                                const std::string& key) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || v > 65535)
    return make_error(errc::invalid_argument, key + ": '" + spec
                                                + "' is not a port or a range of ports (e.g. "
                                                  "9249 or 9250-9260)");
  return static_cast<std::uint16_t>(v);
}

/// httplib binds with SO_REUSEPORT, so its bind succeeds on a port another server holds: a
/// plain bind tells whether the port is really free.
bool port_free(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints,
                    &found)
        != 0
      || !found)
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

/// httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed in Debian's library):
/// a burst of clients then loses SYNs and waits 1, 3, 7 s for the retries. Linux lets listen()
/// be called again to raise it; the socket is the one listening on `port` (httplib keeps it
/// private).
void raise_listen_backlog(std::uint16_t port) {
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
      continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0)
      continue;
    std::uint16_t bound = 0;
    if (addr.ss_family == AF_INET)
      bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    else if (addr.ss_family == AF_INET6)
      bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port)
      ::listen(fd, SOMAXCONN);
  }
}

} // namespace

expected<std::pair<std::uint16_t, std::uint16_t>> parse_port_range(const std::string& spec,
                                                                   const std::string& key) {
  auto dash = spec.find('-');
  auto first = port_of(std::string_view(spec).substr(0, dash), spec, key);
  if (!first)
    return first.error();
  if (dash == std::string::npos)
    return std::make_pair(*first, *first);
  auto last = port_of(std::string_view(spec).substr(dash + 1), spec, key);
  if (!last)
    return last.error();
  if (*last < *first || *first == 0)
    return make_error(errc::invalid_argument, key + ": '" + spec + "' is an empty range");
  return std::make_pair(*first, *last);
}

struct http_service::impl {
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
};

expected<std::unique_ptr<http_service>> http_service::start(std::unique_ptr<httplib::Server> server,
                                                            const std::string& host,
                                                            const std::string& port_spec,
                                                            const std::string& option_key,
                                                            const std::string& what) {
  auto range = parse_port_range(port_spec, option_key);
  if (!range)
    return range.error();
  // httplib reads "" as no address at all; all interfaces is "0.0.0.0".
  const std::string bind_host = host.empty() ? "0.0.0.0" : host;
  int bound = -1;
  if (range->first == 0) {
    bound = server->bind_to_any_port(bind_host);
  } else {
    for (unsigned p = range->first; p <= range->second && bound < 0; ++p)
      if (port_free(bind_host, static_cast<std::uint16_t>(p))
          && server->bind_to_port(bind_host, static_cast<int>(p)))
        bound = static_cast<int>(p);
  }
  if (bound <= 0)
    return make_error(
      errc::unreachable,
      "Could not start " + what + ": no free port in " + port_spec + " on " + bind_host);
  raise_listen_backlog(static_cast<std::uint16_t>(bound));
  std::unique_ptr<http_service> s(new http_service);
  s->port_ = static_cast<std::uint16_t>(bound);
  s->impl_ = std::make_unique<impl>();
  s->impl_->server = std::move(server);
  auto* srv = s->impl_->server.get();
  auto ended = std::make_shared<std::atomic<bool>>(false);
  s->impl_->thread = std::thread([srv, ended] {
    srv->listen_after_bind();
    *ended = true;
  });
  // httplib's stop() does nothing before the accept loop runs: wait for it (or for its end,
  // should it fail at once), so that a server stopped right after it started does not serve on.
  while (!srv->is_running() && !*ended)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return s;
}

void http_service::stop() {
  if (!impl_)
    return;
  impl_->server->stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

http_service::~http_service() {
  stop();
}

} // namespace flint::http
