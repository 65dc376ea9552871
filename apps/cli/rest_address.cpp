#include "apps/cli/rest_address.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>

#include "runtime/http/httplib.hpp"

namespace flint::cli {

std::optional<config::host_port> rpc_address_from_rest_config(const std::string& body,
                                                              const std::string& rest_host) {
  auto list = nlohmann::json::parse(body, nullptr, false);
  if (list.is_discarded() || !list.is_array())
    return std::nullopt;
  for (const auto& entry : list) {
    if (!entry.is_object() || !entry.contains("key") || !entry.contains("value")
        || !entry["key"].is_string() || !entry["value"].is_string()
        || entry["key"].get<std::string>() != "jobmanager.rpc.port")
      continue;
    const auto text = entry["value"].get<std::string>();
    try {
      std::size_t used = 0;
      auto port = std::stoi(text, &used);
      // 0 is "any free port" as configured, not where the JobManager listens.
      if (used == text.size() && port > 0 && port <= 65535)
        return config::host_port{rest_host, static_cast<std::uint16_t>(port)};
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool speaks_first(const config::host_port& address, std::chrono::milliseconds wait) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found)
      != 0)
    return false;
  bool spoke = false;
  for (auto* a = found; a != nullptr && !spoke; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
      continue;
    pollfd p{fd, POLLOUT, 0};
    bool connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0
      || (errno == EINPROGRESS && ::poll(&p, 1, static_cast<int>(wait.count())) == 1
          && (p.revents & POLLOUT) != 0);
    int err = 0;
    socklen_t len = sizeof(err);
    if (connected && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      p = {fd, POLLIN, 0};
      char byte = 0;
      spoke = ::poll(&p, 1, static_cast<int>(wait.count())) == 1
        && ::recv(fd, &byte, 1, MSG_PEEK) == 1;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return spoke;
}

std::optional<config::host_port> rpc_address_via_rest(const config::host_port& given,
                                                      std::chrono::nanoseconds timeout) {
  // Flint's RPC service speaks first (CAF's BASP handshake), an HTTP server waits for the
  // request: an address that speaks first is not asked over HTTP, so the JobManager does not log
  // a stranger's bytes for every command given its RPC address.
  auto wait = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(timeout),
                       std::chrono::milliseconds(300));
  if (speaks_first(given, wait))
    return std::nullopt;
  httplib::Client client(given.host, given.port);
  auto limit = std::chrono::duration_cast<std::chrono::microseconds>(timeout);
  auto seconds = static_cast<time_t>(limit.count() / 1000000);
  auto micros = static_cast<time_t>(limit.count() % 1000000);
  client.set_connection_timeout(seconds, micros);
  client.set_read_timeout(seconds, micros);
  client.set_write_timeout(seconds, micros);
  auto res = client.Get("/jobmanager/config");
  if (!res || res->status != 200)
    return std::nullopt;
  return rpc_address_from_rest_config(res->body, given.host);
}

} // namespace flint::cli
