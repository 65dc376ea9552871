#pragma once
/// Which downstream subtask(s) a record goes to (Flink's StreamPartitioner subclasses).

#include "runtime/graph/user_function.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

namespace flint::graph {

/// The partitioner classes of Flink's DataStream API.
enum class partitioner_kind : std::uint8_t {
  forward,
  rebalance,
  rescale,
  shuffle,
  broadcast,
  global,
  /// KeyGroupStreamPartitioner: key -> key group -> subtask.
  key_group,
};

/// Flink's `toString()` of each partitioner, used as the JobEdge ship strategy: "FORWARD",
/// "REBALANCE", "RESCALE", "SHUFFLE", "BROADCAST", "GLOBAL", "HASH".
std::string_view to_string(partitioner_kind kind);

/// Flink's StreamGraphGenerator.DEFAULT_LOWER_BOUND_MAX_PARALLELISM.
inline constexpr int default_lower_bound_max_parallelism = 128;

/// Flink's KeyGroupRangeAssignment.computeDefaultMaxParallelism:
/// min(max(round_up_pow2(p + p / 2), 128), 32768).
int compute_default_max_parallelism(int parallelism);

/// A partitioner of one StreamEdge.
struct stream_partitioner {
  stream_partitioner() = default;
  /// Implicit, so `{partitioner_kind::rebalance}` reads as the partitioner it names.
  stream_partitioner(partitioner_kind kind) : kind(kind) {}

  partitioner_kind kind = partitioner_kind::forward;
  /// Number of key groups, for `key_group` only.
  int max_parallelism = default_lower_bound_max_parallelism;
  /// The key of `key_group`; shared because many edges may use one keyed stream.
  std::shared_ptr<const key_selector> key;

  /// True for FORWARD and RESCALE, which connect producers and consumers pointwise.
  bool is_pointwise() const {
    return kind == partitioner_kind::forward || kind == partitioner_kind::rescale;
  }
};

} // namespace flint::graph
