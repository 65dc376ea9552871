#pragma once
/// A job's checkpointing settings (Flink's CheckpointCoordinatorConfiguration), read from Flink's
/// keys with Flink's defaults. Plain C++: no CAF, no clock.

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::job_master::checkpoint {

/// `execution.checkpointing.mode`.
enum class checkpointing_mode { exactly_once, at_least_once };

/// `execution.checkpointing.externalized-checkpoint-retention`.
enum class externalized_retention {
  no_externalized_checkpoints,
  delete_on_cancellation,
  retain_on_cancellation,
};

struct checkpoint_settings {
  /// `execution.checkpointing.interval`: the time between periodic triggers.
  std::chrono::milliseconds interval{0};
  /// `execution.checkpointing.timeout`: a checkpoint not complete by then expires (default 10 min).
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  /// `execution.checkpointing.min-pause`: the least time from one completed checkpoint to the
  /// next trigger (default 0).
  std::chrono::milliseconds min_pause{0};
  /// `execution.checkpointing.max-concurrent-checkpoints` (default 1).
  std::int32_t max_concurrent = 1;
  checkpointing_mode mode = checkpointing_mode::exactly_once;
  /// `execution.checkpointing.tolerable-failed-checkpoints`: consecutive failures a job survives
  /// (default 0: the first failed checkpoint fails the job).
  std::int32_t tolerable_failures = 0;
  externalized_retention retention = externalized_retention::no_externalized_checkpoints;
  /// `state.checkpoints.num-retained` (default 1).
  std::int32_t num_retained = 1;
};

/// Flink's names: "EXACTLY_ONCE", "RETAIN_ON_CANCELLATION", ...
const char* to_string(checkpointing_mode m);
const char* to_string(externalized_retention r);

/// The settings of a job whose checkpoint interval is `interval_ms` (from its JobGraph; the
/// configuration's `execution.checkpointing.interval` when the graph has none). A malformed or
/// out-of-range value is errc::invalid_argument naming the key.
expected<checkpoint_settings> make_checkpoint_settings(const config::configuration& config,
                                                       std::int64_t interval_ms);

} // namespace flint::job_master::checkpoint
