#pragma once
/// A vertex of the StreamGraph: one operator with its settings (Flink's StreamNode).

#include "runtime/graph/types.hpp"
#include "runtime/graph/user_function.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// One operator of the StreamGraph.
struct stream_node {
  /// The id of the transformation it came from.
  int id = 0;
  /// With Flink's prefixes: "Source: Collection Source", "Sink: Print to Std. Out", "Map".
  std::string operator_name;
  std::optional<std::string> uid;
  int parallelism = 1;
  /// -1 when unset.
  int max_parallelism = -1;
  std::string slot_sharing_group = "default";
  std::optional<std::string> co_location_group;
  graph::chaining_strategy chaining_strategy = graph::chaining_strategy::always;
  graph::task_kind task_kind = graph::task_kind::one_input_stream_task;
  /// transformation::id_follows_consumer: hashed as if absent, its id derived from its consumer's.
  bool id_follows_consumer = false;
  /// Milliseconds.
  std::int64_t buffer_timeout = 100;
  std::shared_ptr<const operator_factory> factory;
  /// Indices into `stream_graph::edges()`, in creation order.
  std::vector<std::size_t> in_edges;
  std::vector<std::size_t> out_edges;
};

} // namespace flint::graph
