#include "runtime/network/transport/partition_server_connection.hpp"

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/network/transport/transport_messages.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <spdlog/logger.h>

namespace flint::network::transport {

namespace {

const std::shared_ptr<spdlog::logger>& logger() {
  static const auto log = make_endpoint_logger("partition_server");
  return log;
}

/// Empty when the server answered the ping, else why not.
std::optional<std::string> round_trip(caf::actor_system& sys, const caf::actor& server,
                                      std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys, true};
  std::optional<std::string> failure;
  self->request(server, timeout, ping_atom::value)
    .receive([](ping_atom) {}, [&](caf::error& err) { failure = sys.render(err); });
  return failure;
}

} // namespace

expected<caf::actor> connect_partition_server(caf::actor_system& sys, const std::string& host,
                                              std::uint16_t port, const connect_options& options) {
  auto where = host + ":" + std::to_string(port);
  std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<long> pause_ms{1, std::max<long>(1, options.max_pause.count())};
  std::string last_failure;
  int attempts = std::max(1, options.attempts);
  auto timeout = options.round_trip_timeout;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    auto server = rpc::connect_actor(sys, host, port);
    // Nothing listens there (or the handshake failed): a lost race cannot cause this, so no retry.
    if (!server)
      return make_error(errc::unreachable, "connecting failed: " + server.error().message);
    auto failure = round_trip(sys, *server, timeout);
    if (!failure)
      return *server;
    last_failure = *failure;
    if (attempt < attempts) {
      logger()->warn(
        "The partition server at {} did not answer on the new connection ({}); "
        "connecting again ({} of {}).",
        where, last_failure, attempt + 1, attempts);
      std::this_thread::sleep_for(std::chrono::milliseconds{pause_ms(random)});
      timeout *= 2;
    }
  }
  return make_error(errc::unreachable,
                    "no answer on any of " + std::to_string(attempts)
                      + " connections (last: " + last_failure + ")");
}

} // namespace flint::network::transport
