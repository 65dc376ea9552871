#pragma once
/// A pipelined region of the ExecutionGraph (Flink's SchedulingPipelinedRegion).

#include <cstdint>
#include <vector>

namespace flint::graph {

/// Subtasks connected by pipelined exchanges: they must be scheduled, and restarted, together.
struct pipelined_region {
  /// Indices into `execution_graph::vertices()`, ascending.
  std::vector<std::uint32_t> vertices;
};

} // namespace flint::graph
