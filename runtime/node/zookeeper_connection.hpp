#pragma once
/// Connects a process to ZooKeeper for HA (Flink's ZooKeeperUtils.startCuratorFramework): up to
/// `high-availability.zookeeper.client.max-retry-attempts` attempts, each waiting
/// `.connection-timeout`, `.retry-wait` apart, with the configured session timeout. Each failed
/// attempt is logged; the last one fails with an error naming the quorum.

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

} // namespace flint::node
