#include "runtime/network/transport/connection_manager.hpp"

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/network/transport/connection_cache.hpp"
#include "runtime/network/transport/partition_server_connection.hpp"

#include <utility>

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

namespace flint::network::transport {

expected<std::unique_ptr<connection_manager>> connection_manager::start(
  caf::actor_system& sys, caf::actor server, std::string advertised_host, std::uint16_t port,
  const std::string& bind_address) {
  if (!sys.has_middleman()) {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return make_error(errc::invalid_argument,
                      "remote channels need an actor system with CAF's middleman");
  }
  // Over TLS when the node uses it, like every other connection of the node.
  auto bound = rpc::publish_actor(sys, server, port, bind_address);
  if (!bound) {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return make_error(errc::unreachable,
                      "cannot listen for partition requests: " + bound.error().message);
  }
  auto* system = &sys;
  auto connect = [system](const std::string& host, std::uint16_t peer_port) {
    return connect_partition_server(*system, host, peer_port);
  };
  auto connections =
    std::make_shared<connection_cache>(std::move(advertised_host), *bound, server, connect);
  return std::unique_ptr<connection_manager>(
    new connection_manager(sys, std::move(server), *bound, connections));
}

connection_manager::connection_manager(caf::actor_system& sys, caf::actor server,
                                       std::uint16_t port,
                                       std::shared_ptr<connection_cache> connections)
  : system_(&sys),
    server_(std::move(server)),
    port_(port),
    connections_(std::move(connections)) {}

connection_manager::~connection_manager() {
  stop();
}

void connection_manager::stop() {
  if (!server_)
    return;
  (void)system_->middleman().unpublish(server_, port_);
  caf::anon_send_exit(server_, caf::exit_reason::user_shutdown);
  server_ = caf::actor{};
}

} // namespace flint::network::transport
