#pragma once
/// An IntermediateDataSet of the ExecutionGraph (Flink's IntermediateResult).

#include "runtime/graph/ids.hpp"
#include "runtime/graph/types.hpp"

#include <cstdint>

namespace flint::graph {

/// An IntermediateDataSet at runtime.
struct intermediate_result {
  intermediate_data_set_id id;
  /// Index into `execution_graph::job_vertices()`.
  std::uint32_t producer = 0;
  /// The consuming ExecutionJobVertex (each data set has one consumer edge).
  std::uint32_t consumer = 0;
  result_partition_type result_type = result_partition_type::pipelined_bounded;
  distribution_pattern pattern = distribution_pattern::all_to_all;
  /// Its partitions are `execution_graph::partitions()[first_partition, first_partition + num_partitions)`.
  std::uint32_t first_partition = 0;
  std::uint32_t num_partitions = 0;
};

} // namespace flint::graph
