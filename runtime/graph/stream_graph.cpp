#include "runtime/graph/stream_graph.hpp"

namespace flint::graph {

std::string stream_edge::edge_id() const {
  return std::to_string(source_id) + "_" + std::to_string(target_id) + "_"
    + std::to_string(type_number) + "_" + std::string(to_string(partitioner.kind));
}

std::string_view to_string(chaining_verdict verdict) {
  switch (verdict) {
    case chaining_verdict::chainable: return "chainable";
    case chaining_verdict::downstream_has_several_inputs: return "downstream_has_several_inputs";
    case chaining_verdict::different_slot_sharing_groups: return "different_slot_sharing_groups";
    case chaining_verdict::upstream_never_chains: return "upstream_never_chains";
    case chaining_verdict::downstream_not_always: return "downstream_not_always";
    case chaining_verdict::partitioner_not_forward: return "partitioner_not_forward";
    case chaining_verdict::shuffle_mode_batch: return "shuffle_mode_batch";
    case chaining_verdict::parallelism_differs: return "parallelism_differs";
    case chaining_verdict::chaining_disabled: return "chaining_disabled";
  }
  return "?";
}

stream_graph::stream_graph(stream_graph_config config) : config_(std::move(config)) {}

expected<unit> stream_graph::add_node(stream_node node) {
  if (nodes_.count(node.id) != 0 || virtual_nodes_.count(node.id) != 0)
    return make_error(errc::invalid_argument, "Duplicate StreamNode id " + std::to_string(node.id));
  if (node.task_kind == task_kind::source_stream_task)
    sources_.insert(node.id);
  int id = node.id;
  nodes_.emplace(id, std::move(node));
  return unit{};
}

expected<unit> stream_graph::add_virtual_partition_node(int original_id, int virtual_id,
                                                        stream_partitioner partitioner,
                                                        graph::shuffle_mode mode) {
  if (nodes_.count(virtual_id) != 0 || virtual_nodes_.count(virtual_id) != 0)
    return make_error(errc::invalid_argument,
                      "Already has virtual partition node with id " + std::to_string(virtual_id));
  virtual_nodes_.emplace(virtual_id,
                         virtual_partition_node{original_id, std::move(partitioner), mode});
  return unit{};
}

expected<unit> stream_graph::add_virtual_side_output_node(int original_id, int virtual_id,
                                                          std::string output_tag) {
  if (nodes_.count(virtual_id) != 0 || virtual_nodes_.count(virtual_id) != 0)
    return make_error(errc::invalid_argument,
                      "Already has virtual output node with id " + std::to_string(virtual_id));
  virtual_partition_node node;
  node.original_id = original_id;
  node.output_tag = std::move(output_tag);
  virtual_nodes_.emplace(virtual_id, std::move(node));
  return unit{};
}

expected<unit> stream_graph::add_edge(int upstream_id, int downstream_id, int type_number) {
  // Resolve chains of virtual nodes as Flink's addEdgeInternal does: the partitioner applied
  // last (`x.rebalance().shuffle()` shuffles) wins, the shuffle mode of the innermost one.
  std::optional<stream_partitioner> partitioner;
  graph::shuffle_mode mode = graph::shuffle_mode::undefined;
  std::string output_tag;
  int current = upstream_id;
  while (true) {
    auto it = virtual_nodes_.find(current);
    if (it == virtual_nodes_.end())
      break;
    if (!it->second.output_tag.empty()) {
      // A side output's tag: the innermost one names where the records come from.
      output_tag = it->second.output_tag;
    } else {
      if (!partitioner)
        partitioner = it->second.partitioner;
      mode = it->second.shuffle_mode;
    }
    current = it->second.original_id;
  }
  if (!nodes_.count(current) || !nodes_.count(downstream_id))
    return make_error(errc::not_found,
                      "StreamEdge " + std::to_string(upstream_id) + " -> "
                        + std::to_string(downstream_id) + " names an unknown node");
  if (!partitioner) {
    stream_partitioner chosen;
    chosen.kind = nodes_.at(current).parallelism == nodes_.at(downstream_id).parallelism
      ? partitioner_kind::forward
      : partitioner_kind::rebalance;
    partitioner = std::move(chosen);
  }
  auto added = add_edge(current, downstream_id, type_number, std::move(*partitioner), mode);
  if (added && !output_tag.empty())
    edges_.back().output_tag = std::move(output_tag);
  return added;
}

expected<unit> stream_graph::add_edge(int upstream_id, int downstream_id, int type_number,
                                      stream_partitioner partitioner, graph::shuffle_mode mode) {
  auto up = nodes_.find(upstream_id);
  auto down = nodes_.find(downstream_id);
  if (up == nodes_.end() || down == nodes_.end())
    return make_error(errc::not_found,
                      "StreamEdge " + std::to_string(upstream_id) + " -> "
                        + std::to_string(downstream_id) + " names an unknown node");
  if (partitioner.kind == partitioner_kind::forward
      && up->second.parallelism != down->second.parallelism)
    return make_error(errc::invalid_argument,
                      "Forward partitioning does not allow change of parallelism. Upstream operation: " +
                          up->second.operator_name + " parallelism: " + std::to_string(up->second.parallelism) +
                          ", downstream operation: " + down->second.operator_name +
                          " parallelism: " + std::to_string(down->second.parallelism) +
                          " You must use another partitioning strategy, such as broadcast, rebalance, shuffle or "
                          "global.");
  stream_edge edge;
  edge.source_id = upstream_id;
  edge.target_id = downstream_id;
  edge.type_number = type_number;
  edge.partitioner = std::move(partitioner);
  edge.shuffle_mode = mode;
  edge.source_parallelism = up->second.parallelism;
  edge.target_parallelism = down->second.parallelism;
  edges_.push_back(std::move(edge));
  up->second.out_edges.push_back(edges_.size() - 1);
  down->second.in_edges.push_back(edges_.size() - 1);
  return unit{};
}

chaining_verdict stream_graph::check_chainable(const stream_edge& edge) const {
  const stream_node& up = nodes_.at(edge.source_id);
  const stream_node& down = nodes_.at(edge.target_id);
  if (down.in_edges.size() != 1)
    return chaining_verdict::downstream_has_several_inputs;
  if (up.slot_sharing_group != down.slot_sharing_group)
    return chaining_verdict::different_slot_sharing_groups;
  if (up.chaining_strategy == chaining_strategy::never)
    return chaining_verdict::upstream_never_chains;
  if (down.chaining_strategy != chaining_strategy::always)
    return chaining_verdict::downstream_not_always;
  if (edge.partitioner.kind != partitioner_kind::forward)
    return chaining_verdict::partitioner_not_forward;
  if (edge.shuffle_mode == shuffle_mode::batch)
    return chaining_verdict::shuffle_mode_batch;
  if (up.parallelism != down.parallelism)
    return chaining_verdict::parallelism_differs;
  if (!config_.chaining_enabled)
    return chaining_verdict::chaining_disabled;
  return chaining_verdict::chainable;
}

} // namespace flint::graph
