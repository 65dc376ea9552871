#pragma once
/// What an input side does with checkpoint barriers (Flink's CheckpointBarrierHandler): the
/// exactly-once `barrier_aligner` holds each channel that delivered barrier n until every live
/// channel has, then the task snapshots; the at-least-once `barrier_tracker` holds nothing and
/// snapshots once barrier n came from every live channel. Plain logic over channel indices: the
/// input gate does the holding, the task the snapshot.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/network/checkpoint_barrier.hpp"

namespace flint::network {

/// What to do after one input event.
struct barrier_decision {
  /// Hold the channel the barrier came on: nothing more is read from it until released.
  bool block_channel = false;
  /// Every live channel delivered this barrier: snapshot now (before reading further).
  std::optional<checkpoint_barrier> trigger;
  /// This checkpoint will not complete here (a newer barrier overtook it, or it was cancelled):
  /// the task declines it.
  std::optional<std::int64_t> aborted;
  /// Channels to read from again.
  std::vector<std::size_t> release;
};

/// Exactly-once alignment (Flink's SingleCheckpointBarrierHandler, aligned checkpoints).
class barrier_aligner {
public:
  explicit barrier_aligner(std::size_t channels);

  barrier_decision on_barrier(std::size_t channel, const checkpoint_barrier& barrier);
  /// The coordinator aborted `checkpoint_id` (or a cancel marker came): held channels are freed.
  barrier_decision on_cancellation(std::int64_t checkpoint_id);
  /// A channel ended: it no longer takes part, which may complete an alignment.
  barrier_decision on_end_of_partition(std::size_t channel);

  bool is_blocked(std::size_t channel) const { return blocked_.at(channel); }
  /// The checkpoint being aligned, if any.
  std::optional<std::int64_t> aligning() const { return aligning_; }
  std::size_t number_of_blocked() const;

private:
  barrier_decision release_all();
  bool all_live_blocked() const;

  std::vector<bool> blocked_;
  std::vector<bool> ended_;
  std::optional<std::int64_t> aligning_;
  checkpoint_barrier barrier_;
  /// Barriers at or below this id are late: their checkpoint completed or was given up here.
  std::int64_t last_finished_ = 0;
};

/// At-least-once (Flink's CheckpointBarrierTracker): channels are never held; records after a
/// barrier may enter the snapshot, and are replayed after a restore.
class barrier_tracker {
public:
  explicit barrier_tracker(std::size_t channels);

  barrier_decision on_barrier(std::size_t channel, const checkpoint_barrier& barrier);
  barrier_decision on_cancellation(std::int64_t checkpoint_id);
  barrier_decision on_end_of_partition(std::size_t channel);

private:
  struct in_flight {
    checkpoint_barrier barrier;
    std::vector<bool> seen;
  };
  std::optional<checkpoint_barrier> complete_if_seen_everywhere(in_flight& f) const;

  std::vector<bool> ended_;
  /// Checkpoints some channel delivered, oldest first.
  std::vector<in_flight> in_flight_;
  std::int64_t last_finished_ = 0;
};

} // namespace flint::network
