#pragma once
/// A JobVertex of the ExecutionGraph (Flink's ExecutionJobVertex).

#include <cstdint>
#include <vector>

namespace flint::graph {

/// A JobVertex at runtime.
struct execution_job_vertex {
  /// Index into `job_graph::vertices`.
  std::uint32_t job_vertex = 0;
  std::int32_t parallelism = 1;
  /// Resolved: the vertex's, else the job's, else Flink's default for the parallelism.
  std::int32_t max_parallelism = 128;
  /// Its subtasks are `execution_graph::vertices()[first_vertex, first_vertex + parallelism)`.
  std::uint32_t first_vertex = 0;
  /// Indices into `execution_graph::results()`, one per produced data set.
  std::vector<std::uint32_t> produced_results;
  /// Indices into `execution_graph::results()`, by input number.
  std::vector<std::uint32_t> inputs;
};

} // namespace flint::graph
