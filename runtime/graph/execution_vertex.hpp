#pragma once
/// One subtask of the ExecutionGraph (Flink's ExecutionVertex) and its id.

#include "runtime/graph/execution.hpp"
#include "runtime/graph/ids.hpp"

#include <compare>
#include <cstdint>
#include <vector>

namespace flint::graph {

/// Names a subtask: the JobVertex and the subtask index.
struct execution_vertex_id {
  job_vertex_id job_vertex;
  std::int32_t subtask_index = 0;
  friend auto operator<=>(const execution_vertex_id&, const execution_vertex_id&) = default;
};

/// One subtask.
struct execution_vertex {
  /// Index into `execution_graph::job_vertices()`.
  std::uint32_t job_vertex = 0;
  std::int32_t subtask_index = 0;
  /// Indices into `consumed_partition_groups()`, by input number.
  std::vector<std::uint32_t> consumed_partition_groups;
  /// Index into `regions()`.
  std::uint32_t region = 0;
  /// The current attempt; earlier attempts are only counted.
  graph::execution current_execution;
};

} // namespace flint::graph
