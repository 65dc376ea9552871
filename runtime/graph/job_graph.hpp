#pragma once
/// The second of the four graphs, and what the client submits (Flink's JobGraph).
///
/// Plain data: it compares with `==`, travels as Cap'n Proto (`codec/job_graph_codec.hpp`) and
/// holds no user code. Relations are indices into the vectors, not pointers.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_vertex.hpp"
#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// The output of one JobVertex towards one consumer (Flink's IntermediateDataSet).
struct intermediate_data_set {
  intermediate_data_set_id id;
  /// Index into `job_graph::vertices`.
  std::size_t producer = 0;
  result_partition_type result_type = result_partition_type::pipelined_bounded;
  /// Indices into `job_graph::edges`.
  std::vector<std::size_t> consumers;

  friend bool operator==(const intermediate_data_set&, const intermediate_data_set&) = default;
};

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

/// Vertices whose subtasks may share a slot (soft constraint, §3.5.1).
struct slot_sharing_group {
  std::string name;
  /// Indices into `job_graph::vertices`.
  std::vector<std::size_t> vertices;

  friend bool operator==(const slot_sharing_group&, const slot_sharing_group&) = default;
};

/// Vertices whose i-th subtasks must run in the same slot (hard constraint, §3.5.2).
struct co_location_group {
  std::string key;
  std::vector<std::size_t> vertices;

  friend bool operator==(const co_location_group&, const co_location_group&) = default;
};

/// Which vertices take part in checkpoints (§3.6).
struct checkpoint_settings {
  /// Milliseconds; -1 when checkpointing is disabled.
  std::int64_t interval = -1;
  /// Indices into `job_graph::vertices`: the input vertices.
  std::vector<std::size_t> trigger_vertices;
  /// All vertices.
  std::vector<std::size_t> ack_vertices;
  /// All vertices.
  std::vector<std::size_t> commit_vertices;

  friend bool operator==(const checkpoint_settings&, const checkpoint_settings&) = default;
};

/// Job-wide settings (§3.7).
struct job_execution_config {
  /// -1 when unset.
  int max_parallelism = -1;
  std::int64_t buffer_timeout = 100;
  bool chaining_enabled = true;
  global_data_exchange_mode exchange_mode = global_data_exchange_mode::all_edges_pipelined;

  friend bool operator==(const job_execution_config&, const job_execution_config&) = default;
};

/// JobVertices in creation order (Flink's order: a chain is created after the chains it feeds).
struct job_graph {
  graph::job_id job_id;
  std::string name;
  std::vector<job_vertex> vertices;
  std::vector<intermediate_data_set> data_sets;
  std::vector<job_edge> edges;
  std::vector<slot_sharing_group> slot_sharing_groups;
  std::vector<co_location_group> co_location_groups;
  checkpoint_settings checkpointing;
  job_execution_config execution_config;

  /// The index of the vertex with `id`, if any.
  std::optional<std::size_t> find_vertex(const job_vertex_id& id) const;
  /// Vertex indices with every producer before its consumers, input vertices first in vertex
  /// order (Flink's getVerticesSortedTopologicallyFromSources). Fails on a cycle.
  expected<std::vector<std::size_t>> vertices_sorted_topologically() const;
  /// Checks that every index points into its vector and the relations agree both ways; a decoded
  /// graph is only used after this.
  expected<unit> validate() const;

  friend bool operator==(const job_graph&, const job_graph&) = default;
};

} // namespace flint::graph
