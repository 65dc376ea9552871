#pragma once
/// What a subtask measured of its part in one checkpoint (Flink's CheckpointMetrics), sent with
/// its acknowledgement. -1: not measured (Flink's default), e.g. an acknowledgement from a sender
/// that does not measure.

#include <cstdint>

namespace flint::state {

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
