#include "runtime/network/transport/connection_cache.hpp"

namespace flint::network::transport {

connection_cache::connection_cache(std::string host, std::uint16_t data_port, caf::actor own_server,
                                   connector connect)
  : host_(std::move(host)),
    data_port_(data_port),
    own_server_(std::move(own_server)),
    connect_(std::move(connect)) {}

bool connection_cache::is_local(const graph::producer_location& producer) const {
  return producer.data_port == 0 || (producer.data_port == data_port_ && producer.host == host_);
}

expected<caf::actor> connection_cache::server_of(const graph::producer_location& producer) {
  if (is_local(producer))
    return own_server_;
  auto address = std::make_pair(producer.host, producer.data_port);
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (auto it = peers_.find(address); it != peers_.end())
      return it->second;
  }
  // Outside the lock: connecting blocks (a TCP handshake) and other tasks may need other peers.
  if (!connect_)
    return make_error(errc::unreachable, "no connector for remote channels");
  auto peer = connect_(producer.host, producer.data_port);
  if (!peer)
    return make_error(peer.error().code,
                      "cannot reach the partition server of " + producer.resource_id + " at "
                        + producer.host + ":" + std::to_string(producer.data_port) + ": "
                        + peer.error().message);
  std::lock_guard<std::mutex> guard{mutex_};
  // A concurrent connect to the same address may have won; both handles reach the same server.
  return peers_.emplace(address, std::move(*peer)).first->second;
}

void connection_cache::forget(const graph::producer_location& producer) {
  std::lock_guard<std::mutex> guard{mutex_};
  peers_.erase(std::make_pair(producer.host, producer.data_port));
}

std::size_t connection_cache::num_connections() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return peers_.size();
}

} // namespace flint::network::transport
