#pragma once
/// The one conversion between what a task measured of a checkpoint (state::checkpoint_metrics)
/// and the acknowledgement's and status report's field (job_master::checkpoint_metrics, generated
/// from JmCheckpointMetrics): the same six figures, named so that no caller lists them by position.

#include "runtime/state/checkpoint_metrics.hpp"
#include "schemas/job_master.messages.hpp"

namespace flint::job_master {

inline checkpoint_metrics to_wire(const state::checkpoint_metrics& m) {
  return {.bytes_processed_during_alignment = m.bytes_processed_during_alignment,
          .bytes_persisted_during_alignment = m.bytes_persisted_during_alignment,
          .alignment_duration_nanos = m.alignment_duration_nanos,
          .sync_duration_millis = m.sync_duration_millis,
          .async_duration_millis = m.async_duration_millis,
          .checkpoint_start_delay_nanos = m.checkpoint_start_delay_nanos};
}

inline state::checkpoint_metrics from_wire(const checkpoint_metrics& m) {
  return {.bytes_processed_during_alignment = m.bytes_processed_during_alignment,
          .bytes_persisted_during_alignment = m.bytes_persisted_during_alignment,
          .alignment_duration_nanos = m.alignment_duration_nanos,
          .sync_duration_millis = m.sync_duration_millis,
          .async_duration_millis = m.async_duration_millis,
          .checkpoint_start_delay_nanos = m.checkpoint_start_delay_nanos};
}

} // namespace flint::job_master
