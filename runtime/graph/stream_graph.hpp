#pragma once
/// The first of the four graphs: operators and the edges between them (Flink's StreamGraph).

#include "runtime/common/expected.hpp"
#include "runtime/graph/stream_edge.hpp"
#include "runtime/graph/stream_node.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace flint::graph {

/// A keyBy/rebalance/...: an id that edges may start from, resolved to a real node.
struct virtual_partition_node {
  int original_id = 0;
  stream_partitioner partitioner;
  graph::shuffle_mode shuffle_mode = graph::shuffle_mode::undefined;
  /// A side output node (Flink's virtual side output node) names the output tag whose records
  /// its edges carry, and sets no partitioner.
  std::string output_tag;
};

/// Why an edge does or does not chain: the eight conditions of Flink's `isChainable`, checked in
/// this order; `chainable` when all hold.
enum class chaining_verdict : std::uint8_t {
  chainable,
  downstream_has_several_inputs,
  different_slot_sharing_groups,
  upstream_never_chains,
  downstream_not_always,
  partitioner_not_forward,
  shuffle_mode_batch,
  parallelism_differs,
  chaining_disabled,
};

/// Snake-case name of a verdict.
std::string_view to_string(chaining_verdict verdict);

/// Job-wide settings the StreamGraph carries to the JobGraph.
struct stream_graph_config {
  std::string job_name = "Flint Streaming Job";
  /// `pipeline.operator-chaining`.
  bool chaining_enabled = true;
  global_data_exchange_mode exchange_mode = global_data_exchange_mode::all_edges_pipelined;
  /// `pipeline.max-parallelism`; -1 when unset.
  int max_parallelism = -1;
  /// `execution.buffer-timeout` in milliseconds.
  std::int64_t buffer_timeout = 100;
  /// `pipeline.auto-watermark-interval` in ms: how often periodic watermarks are emitted.
  std::int64_t auto_watermark_interval = 200;
  /// `execution.checkpointing.interval` in milliseconds; -1 disables checkpoints.
  std::int64_t checkpoint_interval = -1;
};

/// Operators (StreamNodes), edges (StreamEdges) and virtual partition nodes.
class stream_graph {
public:
  explicit stream_graph(stream_graph_config config = {});

  const stream_graph_config& config() const { return config_; }
  stream_graph_config& config() { return config_; }

  /// Adds a node; a source node is also remembered in `sources()`.
  expected<unit> add_node(stream_node node);
  /// Remembers `node_id` as a sink.
  void add_sink(int node_id) { sinks_.insert(node_id); }

  /// Lets edges start from `virtual_id` as if from `original_id` through `partitioner`.
  expected<unit> add_virtual_partition_node(int original_id, int virtual_id,
                                            stream_partitioner partitioner,
                                            graph::shuffle_mode mode);

  /// Connects `upstream_id` (possibly virtual) to `downstream_id` (Flink's addEdgeInternal):
  /// without a partitioner FORWARD when the parallelisms match, else REBALANCE; an explicit
  /// FORWARD between different parallelisms is refused.
  expected<unit> add_edge(int upstream_id, int downstream_id, int type_number);
  /// A virtual node whose edges carry the records `original_id` emits to `output_tag`.
  expected<unit> add_virtual_side_output_node(int original_id, int virtual_id,
                                              std::string output_tag);

  /// Like `add_edge` with a given partitioner, for tests and programs that build graphs by hand.
  expected<unit> add_edge(int upstream_id, int downstream_id, int type_number,
                          stream_partitioner partitioner, graph::shuffle_mode mode);

  bool contains(int node_id) const { return nodes_.count(node_id) != 0; }
  /// Precondition: `contains(node_id)`.
  const stream_node& node(int node_id) const { return nodes_.at(node_id); }
  stream_node& node(int node_id) { return nodes_.at(node_id); }
  /// All nodes by id.
  const std::map<int, stream_node>& nodes() const { return nodes_; }
  const std::vector<stream_edge>& edges() const { return edges_; }
  const stream_edge& edge(std::size_t index) const { return edges_[index]; }
  stream_edge& edge(std::size_t index) { return edges_[index]; }
  const std::map<int, virtual_partition_node>& virtual_partition_nodes() const {
    return virtual_nodes_;
  }
  const std::set<int>& sources() const { return sources_; }
  const std::set<int>& sinks() const { return sinks_; }

  /// Whether `edge` may be chained, and if not the first condition that fails.
  chaining_verdict check_chainable(const stream_edge& edge) const;
  bool is_chainable(const stream_edge& edge) const {
    return check_chainable(edge) == chaining_verdict::chainable;
  }

private:
  stream_graph_config config_;
  std::map<int, stream_node> nodes_;
  std::vector<stream_edge> edges_;
  std::map<int, virtual_partition_node> virtual_nodes_;
  std::set<int> sources_;
  std::set<int> sinks_;
};

} // namespace flint::graph
