#pragma once
/// This process's side of remote channels (Flink's NettyShuffleEnvironment, connection part):
/// its own data address, its partition request server, and the cached connections to the
/// partition request servers of other processes. Made by
/// streaming_environment::enable_remote_channels; included only by the .cpp files that send
/// CAF messages (it pulls in caf/actor.hpp).

#include "runtime/common/expected.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace flint::streaming {

class shuffle_environment;

class remote_channels {
public:
  /// Reaches the partition request server published at host:port (blocking: the middleman's
  /// remote_actor in production, anything in tests).
  using connector = std::function<expected<caf::actor>(const std::string& host, std::uint16_t port)>;

  /// `server` is this process's partition request server (published at host:data_port); it is
  /// stopped when this object goes.
  remote_channels(std::string host, std::uint16_t data_port, caf::actor server, connector connect);
  ~remote_channels();
  remote_channels(const remote_channels&) = delete;
  remote_channels& operator=(const remote_channels&) = delete;

  const std::string& host() const noexcept { return host_; }
  std::uint16_t data_port() const noexcept { return data_port_; }
  const caf::actor& server() const noexcept { return server_; }

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
  caf::actor server_;
  connector connect_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::uint16_t>, caf::actor> peers_;
};

/// The partition request server of `shuffle`'s process: it reads the partitions of the job each
/// request names and reports finished or cancelled readers as consumed subpartitions, so a
/// pipelined partition is released once every consumer is done (a blocking one stays).
/// `always_copy` sends bytes even to consumers in this actor system (tests of the wire form).
caf::actor spawn_partition_server(caf::actor_system& sys, const std::shared_ptr<shuffle_environment>& shuffle,
                                  bool always_copy = false);

} // namespace flint::streaming
