#pragma once
/// Partitions read together (Flink 1.14's ConsumedPartitionGroup).

#include <cstdint>

namespace flint::graph {

/// Partitions of one result that a consumer reads together; shared by every consumer that reads
/// exactly these (all consumers of an ALL_TO_ALL edge).
struct consumed_partition_group {
  std::uint32_t result = 0;
  /// Global indices into `execution_graph::partitions()`: `[first_partition, first_partition + size)`.
  std::uint32_t first_partition = 0;
  std::uint32_t size = 0;
};

} // namespace flint::graph
