#pragma once
/// The part of an IntermediateResult one subtask produces (Flink's IntermediateResultPartition) and its id.

#include "runtime/graph/ids.hpp"

#include <compare>
#include <cstdint>

namespace flint::graph {

/// Names a partition: the result and the producing subtask.
struct intermediate_result_partition_id {
  intermediate_data_set_id result;
  std::int32_t partition_number = 0;
  friend auto operator<=>(const intermediate_result_partition_id&,
                          const intermediate_result_partition_id&) = default;
};

/// The part of a result one producer subtask writes.
struct intermediate_result_partition {
  /// Index into `execution_graph::results()`.
  std::uint32_t result = 0;
  /// Equals the producer's subtask index.
  std::uint32_t partition_number = 0;
  /// Index into `execution_graph::vertices()`.
  std::uint32_t producer = 0;
  /// Index into `execution_graph::consumer_vertex_groups()`.
  std::uint32_t consumer_vertex_group = 0;
};

} // namespace flint::graph
