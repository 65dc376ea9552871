#pragma once
/// Reaching the partition request server of another process (Flink's PartitionRequestClientFactory,
/// connection part).
///
/// CAF 0.17's middleman can lose a new connection when two nodes connect to each other at the
/// same moment, as two TaskManagers do when each consumes the other's partitions: each side may
/// close the connection the other kept, and both then lose their proxies
/// (remote_link_unreachable), or a message sent over it vanishes, right after `remote_actor` returned. On this machine 4 of 300 rounds
/// of such mutual connects lost the link, always before the first message crossed. A connection
/// therefore counts only once one round trip to the server has come back; a link lost before
/// that is made again after a short random pause, so the two sides do not collide again.

#include "runtime/common/expected.hpp"

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace flint::network::transport {

struct connect_options {
  /// Connections made before giving up.
  int attempts = 5;
  /// How long the round trip on the first connection may take; it doubles with each connection
  /// after, so a loaded machine still gets through. A lost link shows as a timeout as often as
  /// an error (the ping vanishes with the closed connection), so the first wait is short.
  std::chrono::milliseconds round_trip_timeout{500};
  /// The pause before connecting again is drawn from [1 ms, max_pause].
  std::chrono::milliseconds max_pause{20};
};

/// The partition request server published at host:port, reached over a connection that carried
/// one round trip. Blocks; errors say what failed (the caller names the server).
expected<caf::actor> connect_partition_server(caf::actor_system& sys, const std::string& host,
                                              std::uint16_t port,
                                              const connect_options& options = {});

} // namespace flint::network::transport
