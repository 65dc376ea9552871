#include "runtime/node/zookeeper_connection.hpp"

#include <thread>

#include "runtime/ha/zookeeper/zookeeper_client.hpp"

namespace flint::node {

expected<std::shared_ptr<ha::zookeeper_client>> connect_zookeeper(
  const high_availability_settings& s, const std::shared_ptr<spdlog::logger>& log) {
  std::string last;
  for (std::int32_t attempt = 1; attempt <= s.max_retry_attempts; ++attempt) {
    auto client = std::make_shared<ha::zookeeper_client>(log);
    auto connected = client->connect(s.quorum, s.session_timeout, s.connection_timeout);
    if (connected) {
      log->info("Connected to ZooKeeper quorum {} (session timeout {} ms).", s.quorum,
                client->negotiated_session_timeout().count());
      return client;
    }
    last = connected.error().message;
    log->warn("Could not connect to ZooKeeper quorum {} (attempt {} of {}): {}", s.quorum, attempt,
              s.max_retry_attempts, last);
    if (attempt < s.max_retry_attempts)
      std::this_thread::sleep_for(s.retry_wait);
  }
  return make_error(errc::unreachable,
                    "Could not connect to ZooKeeper quorum " + s.quorum + " (high-availability."
                      + "zookeeper.quorum) after " + std::to_string(s.max_retry_attempts)
                      + " attempt(s): " + last);
}

} // namespace flint::node
