#pragma once
/// A vertex of the JobGraph: one chain of operators run by one task (Flink's JobVertex plus the
/// StreamConfigs of its chained operators).

#include "runtime/graph/ids.hpp"
#include "runtime/graph/types.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// One operator inside a JobVertex's chain (what Flink keeps in its StreamConfig). The user
/// function itself stays in the StreamGraph; the data plane finds it by `stream_node_id` in the
/// program it rebuilt and checks `id` against it.
struct chained_operator {
  int stream_node_id = 0;
  graph::operator_id id;
  std::string name;
  std::optional<std::string> uid;
  /// What the operator factory does ("map", "source.collection", ...).
  std::string kind;
  /// 0 for the chain head.
  int chain_index = 0;
  /// StreamNode ids of the operators this one feeds inside the chain.
  std::vector<int> chained_outputs;
  /// Indices into `job_graph::edges` this operator feeds across the network.
  std::vector<std::size_t> non_chained_outputs;
  /// Milliseconds.
  std::int64_t buffer_timeout = 100;

  friend bool operator==(const chained_operator&, const chained_operator&) = default;
};

/// A chain of operators with one parallelism.
struct job_vertex {
  job_vertex_id id;
  /// The chained name, e.g. "Flat Map -> Filter -> Map".
  std::string name;
  int parallelism = 1;
  /// -1 when unset: the ExecutionJobVertex computes Flink's default.
  int max_parallelism = -1;
  task_kind invokable = task_kind::one_input_stream_task;
  /// The chain in order, head first.
  std::vector<chained_operator> operators;
  /// Indices into `job_graph::edges`, by input number.
  std::vector<std::size_t> inputs;
  /// Indices into `job_graph::data_sets`.
  std::vector<std::size_t> produced_data_sets;
  /// Index into `job_graph::slot_sharing_groups`.
  std::size_t slot_sharing_group = 0;
  /// Index into `job_graph::co_location_groups`, if any.
  std::optional<std::size_t> co_location_group;

  /// A vertex without inputs: checkpoints are triggered there.
  bool is_input_vertex() const { return inputs.empty(); }

  friend bool operator==(const job_vertex&, const job_vertex&) = default;
};

} // namespace flint::graph
