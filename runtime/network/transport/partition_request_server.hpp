#pragma once
/// The producer side of remote channels (Flink's PartitionRequestServerHandler and
/// PartitionRequestQueue): one actor per TaskExecutor answers partition requests from the
/// result_partition_manager and streams each requested subpartition to its consumer against
/// credit.

#include "runtime/graph/ids.hpp"
#include "runtime/network/result_partition_id.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
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
  /// Sum of the backlogs sent with data buffers, as sent (a credit-stalled turn's buffers carry
  /// the highest backlog a stalled turn of the reader started with, drain()): divided by
  /// data_buffers_sent, the mean backlog the consumer sized its floating buffers by, not the
  /// producer's mean queue.
  std::atomic<std::uint64_t> backlog_sent{0};
  /// Turns (a wake-up, a credit) that sent at least one buffer or event: data_buffers_sent over
  /// it is the mean burst a credit lets out.
  std::atomic<std::uint64_t> sending_turns{0};
  std::atomic<std::uint64_t> events_sent{0};
  /// Sending turns that ended with a data buffer queued and no credit left (the consumer's
  /// credit, not the producing task, held the channel back).
  std::atomic<std::uint64_t> credit_stalls{0};
  /// Messages with a server atom but another layout, dropped.
  std::atomic<std::uint64_t> malformed_messages{0};
  /// Readers (requested subpartitions) currently served.
  std::atomic<std::uint64_t> active_readers{0};
};

struct server_options {
  /// Send bytes (`buffer_atom`) even to consumers of this process, as across processes. Tests use
  /// it to run the wire form in one deterministic actor system.
  bool always_copy = false;
  std::shared_ptr<server_stats> stats;
  /// Called (on the server's thread) once per reader that ends for good: its end-of-partition
  /// was sent, the consumer cancelled it or the consumer died; and for a cancel of a channel that
  /// never got a reader. The shuffle environment counts the subpartition consumed (Flink releases
  /// a pipelined partition once all its subpartitions are consumed).
  std::function<void(const graph::job_id&, const result_partition_id&, std::size_t subpartition)>
    on_consumed;
};

/// Credit-stalled sending turns for which a reader keeps its backlog mark (spawn_partition_request_
/// server) after the last one that found its producer held up by its pool: the producer that turn
/// woke has not written yet.
inline constexpr std::size_t stalled_mark_grace_turns = 4;

/// Finds the partitions of a job (shuffle_environment::partitions_of); null when the job has none
/// here. Called on the server's thread.
using partition_lookup =
  std::function<std::shared_ptr<result_partition_manager>(const graph::job_id&)>;

/// Spawns the partition request server of a TaskExecutor (or of a process): a request names the
/// job, whose partitions `lookup` gives (result ids are deterministic per program, so two jobs of
/// one program share them).
///
/// Per request it creates a credit_based_view whose data listener mails the server (once per
/// empty → non-empty edge, coalesced), then sends every response the view allows, now and whenever
/// data or credit arrives; it never spins. Each buffer carries the backlog behind it, except
/// that a turn ending with data queued and no credit left stamps all its buffers with the highest
/// backlog a stalled turn of the reader started with since its last turn that did not stall (the
/// consumer sizes its window by the last one; drain() says why). A finished view
/// (end-of-partition sent), a cancel or
/// the consumer's death drops the view. An unknown partition or bad subpartition is answered with
/// a partition error carrying the reason; the consumer decides whether to retry.
caf::actor spawn_partition_request_server(caf::actor_system& sys, partition_lookup lookup,
                                          server_options options = {});

/// A server of one manager whatever the job (benchmarks, tests); `manager` must outlive it.
caf::actor spawn_partition_request_server(caf::actor_system& sys, result_partition_manager& manager,
                                          server_options options = {});

} // namespace flint::network::transport
