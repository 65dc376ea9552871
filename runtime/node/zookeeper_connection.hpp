#pragma once
/// Connects a process to ZooKeeper for HA (Flink's ZooKeeperUtils.startCuratorFramework): up to
/// `high-availability.zookeeper.client.max-retry-attempts` attempts, each waiting
/// `.connection-timeout`, `.retry-wait` apart, with the configured session timeout. Each failed
/// attempt is logged; the last one fails with an error naming the quorum.
///
/// With `high-availability.zookeeper.client.digest-file` the session authenticates with the
/// digest the file holds ("user:password"; read here, never logged), and every node it creates
/// gets the ACL of `high-availability.zookeeper.client.acl`.

#include <chrono>
#include <memory>

#include <spdlog/logger.h>

#include "runtime/common/expected.hpp"
#include "runtime/node/node_settings.hpp"

namespace flint::ha {
class zookeeper_client;
}

namespace flint::node {

expected<std::shared_ptr<ha::zookeeper_client>> connect_zookeeper(
  const high_availability_settings& settings, const std::shared_ptr<spdlog::logger>& log);

/// How long a leader keeps its leadership while the session is suspended (connecting): the
/// session timeout the server negotiated, which is when the server expires the session and so
/// when another contender can lead, whatever was configured (the server bounds it by its
/// minSessionTimeout and maxSessionTimeout). Logs both when they differ.
std::chrono::milliseconds leadership_grace(const ha::zookeeper_client& client,
                                           const high_availability_settings& settings,
                                           const std::shared_ptr<spdlog::logger>& log);

} // namespace flint::node
