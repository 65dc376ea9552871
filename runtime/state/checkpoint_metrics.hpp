#pragma once
/// What a subtask measured of its part in one checkpoint (Flink's CheckpointMetrics), sent with
/// its acknowledgement. -1: not measured (Flink's default), e.g. an acknowledgement from a sender
/// that does not measure.

#include <algorithm>
#include <cstdint>
#include <limits>

namespace flint::state {

/// Flink's checkpointStartDelayNanos from the barrier's timestamp (the JobMaster's wall clock,
/// ms) and this process's wall clock: 0 when the clocks put the barrier in the future, and
/// saturated, not overflowed, for a timestamp a peer got absurdly wrong.
inline std::int64_t start_delay_nanos(std::int64_t now_millis, std::int64_t barrier_millis) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  if (barrier_millis >= now_millis)
    return 0;
  // now - barrier > 0 here; as unsigned it cannot overflow.
  auto delay = static_cast<std::uint64_t>(now_millis) - static_cast<std::uint64_t>(barrier_millis);
  return delay > static_cast<std::uint64_t>(max / 1'000'000)
    ? max
    : static_cast<std::int64_t>(delay) * 1'000'000;
}

struct checkpoint_metrics {
  /// Bytes read from the channels not yet blocked between the first barrier and the end of the
  /// alignment (aligned checkpoints: they were processed, not persisted).
  std::int64_t bytes_processed_during_alignment = -1;
  /// In-flight bytes written into the checkpoint (unaligned checkpoints; 0 for aligned ones).
  std::int64_t bytes_persisted_during_alignment = -1;
  /// From the first barrier to the last one (Flink's checkpointAlignmentTime); 0 for a task
  /// that does not align (a source, one input channel).
  std::int64_t alignment_duration_nanos = -1;
  /// The snapshot on the task's thread, until the barrier went downstream.
  std::int64_t sync_duration_millis = -1;
  /// The state's write on the upload thread, until the acknowledgement is sent.
  std::int64_t async_duration_millis = -1;
  /// From the checkpoint's trigger (the barrier's timestamp) to the subtask's first barrier —
  /// for a source, its trigger (Flink's checkpointStartDelayNanos).
  std::int64_t checkpoint_start_delay_nanos = -1;
  friend bool operator==(const checkpoint_metrics&, const checkpoint_metrics&) = default;
};

} // namespace flint::state
