#pragma once
/// An HTTP server on its own threads (cpp-httplib): the Prometheus reporter and the REST endpoint
/// both bind one at a configured port spec — a port, a range ("9250-9260": the first free one,
/// as Flink does when several nodes share a host) or 0 (any) — and stop it when they end.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "runtime/common/expected.hpp"

namespace httplib {
class Server;
}

namespace flint::http {

/// "9249", "9250-9260" or "0" → the first and last port to try. Errors name `option_key`.
expected<std::pair<std::uint16_t, std::uint16_t>> parse_port_range(const std::string& spec,
                                                                   const std::string& option_key);

class http_service {
public:
  /// Binds `host` at the first free port of `port_spec` and serves `server` (its routes set)
  /// until stopped. `what` names the server in errors ("the REST endpoint").
  static expected<std::unique_ptr<http_service>> start(std::unique_ptr<httplib::Server> server,
                                                       const std::string& host,
                                                       const std::string& port_spec,
                                                       const std::string& option_key,
                                                       const std::string& what);
  ~http_service();
  http_service(const http_service&) = delete;
  http_service& operator=(const http_service&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  /// Ends the accept loop and waits for the serving thread. Idempotent.
  void stop();

private:
  http_service() = default;
  struct impl;
  std::unique_ptr<impl> impl_;
  std::uint16_t port_ = 0;
};

} // namespace flint::http
