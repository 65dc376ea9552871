#pragma once
/// A result of the JobGraph (Flink's IntermediateDataSet).

#include "runtime/graph/ids.hpp"
#include "runtime/graph/types.hpp"

#include <cstddef>
#include <vector>

namespace flint::graph {

/// The output of one JobVertex towards one consumer (Flink's IntermediateDataSet).
struct intermediate_data_set {
  intermediate_data_set_id id;
  /// Index into `job_graph::vertices`.
  std::size_t producer = 0;
  result_partition_type result_type = result_partition_type::pipelined_bounded;
  /// Indices into `job_graph::edges`.
  std::vector<std::size_t> consumers;

  friend bool operator==(const intermediate_data_set&, const intermediate_data_set&) = default;
};

} // namespace flint::graph
