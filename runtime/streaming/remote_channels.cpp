#include "runtime/streaming/remote_channels.hpp"

#include "runtime/network/transport/partition_request_server.hpp"
#include "runtime/streaming/shuffle_environment.hpp"

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

namespace flint::streaming {

remote_channels::remote_channels(std::string host, std::uint16_t data_port, caf::actor server, connector connect)
  : host_(std::move(host)), data_port_(data_port), server_(std::move(server)), connect_(std::move(connect)) {}

remote_channels::~remote_channels() {
  if (server_)
    caf::anon_send_exit(server_, caf::exit_reason::user_shutdown);
}

bool remote_channels::is_local(const graph::producer_location& producer) const {
  return producer.data_port == 0 || (producer.data_port == data_port_ && producer.host == host_);
}

expected<caf::actor> remote_channels::server_of(const graph::producer_location& producer) {
  if (is_local(producer))
    return server_;
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
    return make_error(peer.error().code, "cannot reach the partition server of " + producer.resource_id + " at " +
                                           producer.host + ":" + std::to_string(producer.data_port) + ": " +
                                           peer.error().message);
  std::lock_guard<std::mutex> guard{mutex_};
  // A concurrent connect to the same address may have won; both handles reach the same server.
  return peers_.emplace(address, std::move(*peer)).first->second;
}

void remote_channels::forget(const graph::producer_location& producer) {
  std::lock_guard<std::mutex> guard{mutex_};
  peers_.erase(std::make_pair(producer.host, producer.data_port));
}

std::size_t remote_channels::num_connections() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return peers_.size();
}

caf::actor spawn_partition_server(caf::actor_system& sys, const std::shared_ptr<shuffle_environment>& shuffle,
                                  bool always_copy) {
  // Weak: the environment owns the remote channels, which own this server.
  std::weak_ptr<shuffle_environment> weak = shuffle;
  network::transport::server_options options;
  options.always_copy = always_copy;
  options.on_consumed = [weak](const graph::job_id& job, const network::result_partition_id& id,
                               std::size_t subpartition) {
    if (auto env = weak.lock())
      env->subpartition_consumed(job, id, subpartition);
  };
  return network::transport::spawn_partition_request_server(
    sys,
    [weak](const graph::job_id& job) -> std::shared_ptr<network::result_partition_manager> {
      auto env = weak.lock();
      return env ? env->find_partitions(job) : nullptr;
    },
    std::move(options));
}

} // namespace flint::streaming
