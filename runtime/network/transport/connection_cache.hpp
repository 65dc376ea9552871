#pragma once
/// The connections of a process to the partition request servers of other processes (Flink's
/// PartitionRequestClientFactory, connection part), and the locality rule of its channels.

#include "runtime/common/expected.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <caf/actor.hpp>

namespace flint::network::transport {

class connection_cache {
public:
  /// Reaches the partition request server published at host:port (blocking: the middleman's
  /// connect_partition_server in production, anything in tests).
  using connector =
    std::function<expected<caf::actor>(const std::string& host, std::uint16_t port)>;

  /// This process publishes `own_server` at host:data_port (the cache does not stop it).
  connection_cache(std::string host, std::uint16_t data_port, caf::actor own_server,
                   connector connect);
  connection_cache(const connection_cache&) = delete;
  connection_cache& operator=(const connection_cache&) = delete;

  const std::string& host() const noexcept { return host_; }
  std::uint16_t data_port() const noexcept { return data_port_; }

  /// Contract C: a channel is local when its producer's (host, data_port) is this process's own,
  /// or the producer has no data port (an in-process MiniCluster without remote channels).
  bool is_local(const graph::producer_location& producer) const;

  /// The partition request server of `producer`'s process: this process's own when local, else a
  /// connection made once and then cached (thread-safe; the first call per address blocks).
  expected<caf::actor> server_of(const graph::producer_location& producer);

  /// Drops the cached connection to `producer`'s server (it is gone: the next task connects anew).
  void forget(const graph::producer_location& producer);

  /// Connections made so far (cached addresses).
  std::size_t num_connections() const;

private:
  const std::string host_;
  const std::uint16_t data_port_;
  const caf::actor own_server_;
  connector connect_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::uint16_t>, caf::actor> peers_;
};

} // namespace flint::network::transport
