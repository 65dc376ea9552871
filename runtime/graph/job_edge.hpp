#pragma once
/// An edge of the JobGraph (Flink's JobEdge).

#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"

#include <cstddef>
#include <string>

namespace flint::graph {

/// Connects an IntermediateDataSet to the JobVertex that reads it (Flink's JobEdge).
struct job_edge {
  /// Index into `job_graph::data_sets`.
  std::size_t source = 0;
  /// Index into `job_graph::vertices`.
  std::size_t target = 0;
  distribution_pattern pattern = distribution_pattern::all_to_all;
  /// The partitioner's name: "REBALANCE", "HASH", ...
  std::string ship_strategy_name;
  partitioner_kind partitioner = partitioner_kind::forward;
  /// Key groups of a HASH edge.
  int key_group_max_parallelism = 0;
  /// The StreamEdge it came from (setPhysicalEdges).
  int source_node_id = 0;
  int target_node_id = 0;

  friend bool operator==(const job_edge&, const job_edge&) = default;
};

} // namespace flint::graph
