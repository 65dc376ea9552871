#pragma once
/// A directed edge of the StreamGraph (Flink's StreamEdge).

#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"

#include <string>

namespace flint::graph {

/// Records flow from `source_id` to `target_id` through `partitioner`.
struct stream_edge {
  int source_id = 0;
  int target_id = 0;
  /// Which input of the target (0 for one-input operators).
  int type_number = 0;
  stream_partitioner partitioner;
  graph::shuffle_mode shuffle_mode = graph::shuffle_mode::undefined;
  /// The parallelisms at the time the edge was made, as Flink's edge carries them.
  int source_parallelism = 1;
  int target_parallelism = 1;
  /// Non-empty: the edge carries the records its source emits to this side output (Flink's
  /// StreamEdge outputTag), not its main output.
  std::string output_tag;

  /// "<source>_<target>_<type>_<partitioner>", Flink's edge id shape.
  std::string edge_id() const;
};

} // namespace flint::graph
