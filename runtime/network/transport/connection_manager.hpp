#pragma once
/// A process's side of remote channels (Flink's NettyConnectionManager): its partition request
/// server, published with CAF's middleman on the data port, and the connections to the servers
/// of other processes.

#include "runtime/common/expected.hpp"

#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace flint::network::transport {

class connection_cache;

class connection_manager {
public:
  /// Publishes `server` on `port` (0 = any free port) at `bind_address` (empty: every interface)
  /// of `sys`, which must have the middleman; consumers reach other processes' servers through
  /// connect_partition_server. The manager stops `server` when it stops, and at once when
  /// publishing fails.
  static expected<std::unique_ptr<connection_manager>> start(caf::actor_system& sys,
                                                             caf::actor server,
                                                             std::string advertised_host,
                                                             std::uint16_t port,
                                                             const std::string& bind_address);
  /// stop()
  ~connection_manager();
  connection_manager(const connection_manager&) = delete;
  connection_manager& operator=(const connection_manager&) = delete;

  /// Unpublishes and stops the server (before the actor system goes). Idempotent.
  void stop();

  std::uint16_t data_port() const noexcept { return port_; }
  const caf::actor& server() const noexcept { return server_; }
  /// The connections to other processes' servers (this process's own for local producers).
  const std::shared_ptr<connection_cache>& connections() const noexcept { return connections_; }

private:
  connection_manager(caf::actor_system& sys, caf::actor server, std::uint16_t port,
                     std::shared_ptr<connection_cache> connections);

  caf::actor_system* system_;
  caf::actor server_;
  const std::uint16_t port_;
  const std::shared_ptr<connection_cache> connections_;
};

} // namespace flint::network::transport
