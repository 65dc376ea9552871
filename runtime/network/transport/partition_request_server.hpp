#pragma once
/// The producer side of remote channels (Flink's PartitionRequestServerHandler and
/// PartitionRequestQueue): one actor per TaskExecutor answers partition requests from the
/// result_partition_manager and streams each requested subpartition to its consumer against
/// credit.

#include "runtime/network/result_partition_manager.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

namespace flint::network::transport {

/// Counters of a server, readable from any thread (tests check the credit bound with them; the
/// benchmark reports them).
struct server_stats {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> refused_requests{0};
  std::atomic<std::uint64_t> data_buffers_sent{0};
  std::atomic<std::uint64_t> bytes_sent{0};
  std::atomic<std::uint64_t> events_sent{0};
  /// Readers (requested subpartitions) currently served.
  std::atomic<std::uint64_t> active_readers{0};
};

struct server_options {
  /// Send bytes (`buffer_atom`) even to consumers of this process, as across processes. Tests use
  /// it to run the wire form in one deterministic actor system.
  bool always_copy = false;
  std::shared_ptr<server_stats> stats;
};

/// Spawns the partition request server of a TaskExecutor; `manager` must outlive it.
///
/// Per request it creates a credit_based_view whose data listener mails the server (once per
/// empty → non-empty edge, coalesced), then sends every response the view allows, now and whenever
/// data or credit arrives; it never spins. A finished view (end-of-partition sent), a cancel or
/// the consumer's death drops the view. An unknown partition or bad subpartition is answered with
/// a partition error carrying the reason; the consumer decides whether to retry.
caf::actor spawn_partition_request_server(caf::actor_system& sys, result_partition_manager& manager,
                                          server_options options = {});

} // namespace flint::network::transport
