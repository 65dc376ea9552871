#pragma once
/// Subtasks reading one partition (Flink 1.14's ConsumerVertexGroup).

#include <cstdint>

namespace flint::graph {

/// Subtasks that read one partition; shared by every partition read by exactly these.
struct consumer_vertex_group {
  /// Global indices into `execution_graph::vertices()`: `[first_vertex, first_vertex + size)`.
  std::uint32_t first_vertex = 0;
  std::uint32_t size = 0;
};

} // namespace flint::graph
