#pragma once
/// Settings of the network stack, under Flink's configuration key names.

#include "runtime/common/expected.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace flint::network {

/// The network stack's knobs. Each field names the Flink key it mirrors; defaults are Flink's
/// except where noted.
struct network_config {
  /// `taskmanager.memory.segment-size`: bytes per network buffer (32 KiB).
  std::size_t segment_size = 32 * 1024;
  /// `taskmanager.memory.network.max`: network memory of one TaskExecutor, which fixes the number
  /// of segments of its network_buffer_pool (64 MiB, Flink's minimum). Segments are allocated on
  /// first use, so unused budget costs no RSS.
  std::size_t network_memory = 64 * 1024 * 1024;
  /// `taskmanager.network.memory.buffers-per-channel`: exclusive buffers of each remote input
  /// channel, and the per-subpartition share of a result partition's pool (2).
  std::size_t buffers_per_channel = 2;
  /// `taskmanager.network.memory.floating-buffers-per-gate`: buffers an input gate's channels
  /// share on demand, following the producers' backlog (8).
  std::size_t floating_buffers_per_gate = 8;
  /// `execution.buffer-timeout`: how long a partly filled buffer may wait before its caller
  /// flushes it (100 ms). The network classes do not keep time; the task calls `flush_all()`.
  /// As in Flink, 0 means flush after every record and a negative value only when buffers fill.
  std::chrono::milliseconds buffer_timeout{100};
  /// `taskmanager.network.request-backoff.initial`: first delay before a consumer asks again for
  /// a partition that is not registered yet (100 ms); doubles per retry.
  std::chrono::milliseconds request_backoff_initial{100};
  /// `taskmanager.network.request-backoff.max`: last retry delay before the request fails
  /// (10 s).
  std::chrono::milliseconds request_backoff_max{10000};
  /// `io.tmp.dirs`: where BLOCKING result partitions spill what exceeds their memory budget, in a
  /// folder of this TaskExecutor's own (deleted on shutdown). Several directories are separated
  /// by ',' or ':' and used round robin; each a path or a file:// URI (config::parse_path_list).
  /// Empty (the default): the system's temp directory ($TMPDIR or /tmp), as Flink.
  std::vector<std::string> tmp_dirs;
  /// `taskmanager.network.blocking-shuffle.memory-budget` (Flint's own key): heap memory all
  /// BLOCKING result partitions of one shuffle environment may keep (32 MiB); every buffer beyond
  /// it goes to a file under `io.tmp.dirs`. 0 writes everything to files, as Flink's FILE
  /// blocking shuffle does.
  std::size_t blocking_shuffle_memory = 32 * 1024 * 1024;

  /// Segments of the TaskExecutor's global pool: network_memory / segment_size.
  std::size_t num_segments() const { return segment_size == 0 ? 0 : network_memory / segment_size; }
  /// Smallest pool of a result partition with `subpartitions` consumers (Flink: one buffer per
  /// subpartition plus one, so every subpartition can hold a buffer while one is being filled).
  std::size_t partition_pool_min(std::size_t subpartitions) const { return subpartitions + 1; }
  /// Largest pool of a result partition (Flink: buffers-per-channel per subpartition plus the
  /// floating budget).
  std::size_t partition_pool_max(std::size_t subpartitions) const {
    return subpartitions * buffers_per_channel + floating_buffers_per_gate;
  }

  /// Reads the keys above from string values ("32kb", "64 mb", "100 ms", "2"); unknown keys are
  /// ignored so one map can hold the whole TaskExecutor configuration.
  static expected<network_config> from_map(const std::map<std::string, std::string>& values);
};

} // namespace flint::network
