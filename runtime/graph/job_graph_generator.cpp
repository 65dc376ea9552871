#include "runtime/graph/job_graph_generator.hpp"

#include "runtime/graph/detail/murmur3.hpp"

#include <algorithm>

namespace flint::graph {

result_partition_type determine_result_partition_type(const stream_partitioner& partitioner,
                                                      shuffle_mode mode,
                                                      global_data_exchange_mode global_mode) {
  switch (mode) {
    case shuffle_mode::pipelined: return result_partition_type::pipelined_bounded;
    case shuffle_mode::batch: return result_partition_type::blocking;
    case shuffle_mode::undefined: break;
  }
  switch (global_mode) {
    case global_data_exchange_mode::all_edges_pipelined:
      return result_partition_type::pipelined_bounded;
    case global_data_exchange_mode::all_edges_blocking: return result_partition_type::blocking;
    case global_data_exchange_mode::forward_edges_pipelined:
      return partitioner.kind == partitioner_kind::forward
        ? result_partition_type::pipelined_bounded
        : result_partition_type::blocking;
    case global_data_exchange_mode::pointwise_edges_pipelined:
      return partitioner.is_pointwise() ? result_partition_type::pipelined_bounded
                                        : result_partition_type::blocking;
  }
  return result_partition_type::pipelined_bounded;
}

job_graph_generator::job_graph_generator(const stream_graph& graph, std::optional<graph::job_id> id)
  : stream_(graph) {
  job_.job_id = id.value_or(graph::job_id{});
  job_.name = graph.config().job_name;
  job_.execution_config.max_parallelism = graph.config().max_parallelism;
  job_.execution_config.buffer_timeout = graph.config().buffer_timeout;
  job_.execution_config.auto_watermark_interval = graph.config().auto_watermark_interval;
  job_.execution_config.chaining_enabled = graph.config().chaining_enabled;
  job_.execution_config.exchange_mode = graph.config().exchange_mode;
}

expected<job_graph> job_graph_generator::create_job_graph() {
  auto hashes = hash_stream_graph(stream_);
  if (!hashes)
    return hashes.error();
  hashes_ = std::move(*hashes);
  for (const auto& [id, node] : stream_.nodes())
    if (!hashes_.count(id))
      return make_error(errc::invalid_argument,
                        "StreamNode " + std::to_string(id) + " (" + node.operator_name
                          + ") is not reachable from a source");

  for (int source : stream_.sources()) {
    auto chained = create_chain(source, 0, source);
    if (!chained)
      return chained.error();
  }

  // setPhysicalEdges, per operator: which JobEdges each operator writes to.
  for (auto& vertex : job_.vertices)
    for (auto& op : vertex.operators)
      for (std::size_t e : non_chained_of_node_[op.stream_node_id])
        op.non_chained_outputs.push_back(job_edge_of_stream_edge_.at(e));

  if (auto shared = set_slot_sharing_and_co_location(); !shared)
    return shared.error();
  configure_checkpointing();
  return std::move(job_);
}

expected<std::vector<std::size_t>> job_graph_generator::create_chain(int current, int chain_index,
                                                                     int start) {
  std::vector<std::size_t> transitive_out_edges;
  if (built_.count(start))
    return transitive_out_edges;

  const stream_node& node = stream_.node(current);
  std::vector<std::size_t> chainable;
  std::vector<std::size_t> non_chainable;
  for (std::size_t e : node.out_edges)
    (stream_.is_chainable(stream_.edge(e)) ? chainable : non_chainable).push_back(e);

  for (std::size_t e : chainable) {
    auto more = create_chain(stream_.edge(e).target_id, chain_index + 1, start);
    if (!more)
      return more.error();
    transitive_out_edges.insert(transitive_out_edges.end(), more->begin(), more->end());
  }
  for (std::size_t e : non_chainable) {
    transitive_out_edges.push_back(e);
    int target = stream_.edge(e).target_id;
    auto downstream = create_chain(target, 0, target);
    if (!downstream)
      return downstream.error();
  }

  chained_names_[current] = create_chained_name(current, chainable);

  chained_operator op;
  op.stream_node_id = current;
  op.id = operator_id::from_bytes(hashes_.at(current));
  op.name = node.operator_name;
  op.uid = node.uid;
  op.kind = node.factory ? std::string(node.factory->kind()) : std::string();
  op.chain_index = chain_index;
  for (std::size_t e : chainable)
    op.chained_outputs.push_back(stream_.edge(e).target_id);
  op.buffer_timeout = node.buffer_timeout;
  chains_[start].push_back(std::move(op));
  non_chained_of_node_[current] = non_chainable;

  if (current == start) {
    if (auto created = create_job_vertex(start); !created)
      return created.error();
    for (std::size_t e : transitive_out_edges)
      if (auto connected = connect(start, e); !connected)
        return connected.error();
  }
  return transitive_out_edges;
}

std::string job_graph_generator::create_chained_name(
  int node, const std::vector<std::size_t>& chainable_outputs) const {
  const std::string& name = stream_.node(node).operator_name;
  if (chainable_outputs.size() > 1) {
    std::string joined;
    for (std::size_t e : chainable_outputs) {
      if (!joined.empty())
        joined += ", ";
      joined += chained_names_.at(stream_.edge(e).target_id);
    }
    return name + " -> (" + joined + ")";
  }
  if (chainable_outputs.size() == 1)
    return name + " -> " + chained_names_.at(stream_.edge(chainable_outputs.front()).target_id);
  return name;
}

expected<unit> job_graph_generator::create_job_vertex(int start) {
  const stream_node& head = stream_.node(start);
  job_vertex vertex;
  vertex.id = job_vertex_id::from_bytes(hashes_.at(start));
  if (job_.find_vertex(vertex.id))
    return make_error(errc::invalid_argument,
                      "Two chains share the JobVertex id " + vertex.id.to_string());
  vertex.name = chained_names_.at(start);
  vertex.parallelism = head.parallelism;
  vertex.max_parallelism = head.max_parallelism;
  vertex.invokable = head.task_kind;
  vertex.operators = std::move(chains_[start]);
  // The recursion appends the tail first; keep the chain head first.
  std::stable_sort(vertex.operators.begin(), vertex.operators.end(),
                   [](const chained_operator& a, const chained_operator& b) {
                     return a.chain_index < b.chain_index;
                   });
  vertex_of_head_[start] = job_.vertices.size();
  job_.vertices.push_back(std::move(vertex));
  built_.insert(start);
  return unit{};
}

expected<unit> job_graph_generator::connect(int head, std::size_t stream_edge_index) {
  const stream_edge& edge = stream_.edge(stream_edge_index);
  auto down = vertex_of_head_.find(edge.target_id);
  if (down == vertex_of_head_.end())
    return make_error(errc::internal,
                      "No JobVertex for StreamNode " + std::to_string(edge.target_id));
  std::size_t producer = vertex_of_head_.at(head);
  job_vertex& head_vertex = job_.vertices[producer];

  // Flink draws a random IntermediateDataSetID; deriving it from the producer keeps the JobGraph
  // of a rebuilt program identical.
  detail::murmur3_128 hasher;
  hasher.put_string(head_vertex.id.to_string());
  hasher.put_int(static_cast<std::int32_t>(head_vertex.produced_data_sets.size()));

  intermediate_data_set data_set;
  data_set.id = intermediate_data_set_id::from_bytes(hasher.hash());
  data_set.producer = producer;
  data_set.result_type = determine_result_partition_type(edge.partitioner, edge.shuffle_mode,
                                                         stream_.config().exchange_mode);
  data_set.consumers.push_back(job_.edges.size());

  job_edge job_edge;
  job_edge.source = job_.data_sets.size();
  job_edge.target = down->second;
  job_edge.pattern = edge.partitioner.is_pointwise() ? distribution_pattern::pointwise
                                                     : distribution_pattern::all_to_all;
  job_edge.ship_strategy_name = std::string(to_string(edge.partitioner.kind));
  job_edge.partitioner = edge.partitioner.kind;
  job_edge.key_group_max_parallelism =
    edge.partitioner.kind == partitioner_kind::key_group ? edge.partitioner.max_parallelism : 0;
  job_edge.source_node_id = edge.source_id;
  job_edge.target_node_id = edge.target_id;

  head_vertex.produced_data_sets.push_back(job_.data_sets.size());
  job_.vertices[down->second].inputs.push_back(job_.edges.size());
  job_edge_of_stream_edge_[stream_edge_index] = job_.edges.size();
  job_.data_sets.push_back(std::move(data_set));
  job_.edges.push_back(std::move(job_edge));
  return unit{};
}

expected<unit> job_graph_generator::set_slot_sharing_and_co_location() {
  std::map<std::string, std::size_t> group_index;
  for (std::size_t v = 0; v < job_.vertices.size(); ++v) {
    const auto& head = stream_.node(job_.vertices[v].operators.front().stream_node_id);
    auto [it, fresh] =
      group_index.emplace(head.slot_sharing_group, job_.slot_sharing_groups.size());
    if (fresh)
      job_.slot_sharing_groups.push_back(slot_sharing_group{head.slot_sharing_group, {}});
    job_.slot_sharing_groups[it->second].vertices.push_back(v);
    job_.vertices[v].slot_sharing_group = it->second;
  }
  std::map<std::string, std::size_t> co_location_index;
  for (std::size_t v = 0; v < job_.vertices.size(); ++v) {
    const auto& head = stream_.node(job_.vertices[v].operators.front().stream_node_id);
    if (!head.co_location_group)
      continue;
    auto [it, fresh] =
      co_location_index.emplace(*head.co_location_group, job_.co_location_groups.size());
    if (fresh) {
      job_.co_location_groups.push_back(co_location_group{*head.co_location_group, {}});
    } else {
      std::size_t first = job_.co_location_groups[it->second].vertices.front();
      if (job_.vertices[first].slot_sharing_group != job_.vertices[v].slot_sharing_group)
        return make_error(errc::invalid_argument,
                          "Cannot co-locate operators from different slot sharing groups");
    }
    job_.co_location_groups[it->second].vertices.push_back(v);
    job_.vertices[v].co_location_group = it->second;
  }
  return unit{};
}

void job_graph_generator::configure_checkpointing() {
  // Flink treats intervals below 10 ms as "checkpointing off".
  constexpr std::int64_t minimal_checkpoint_time = 10;
  std::int64_t interval = stream_.config().checkpoint_interval;
  job_.checkpointing.interval = interval >= minimal_checkpoint_time ? interval : -1;
  for (std::size_t v = 0; v < job_.vertices.size(); ++v) {
    if (job_.vertices[v].is_input_vertex())
      job_.checkpointing.trigger_vertices.push_back(v);
    job_.checkpointing.ack_vertices.push_back(v);
    job_.checkpointing.commit_vertices.push_back(v);
  }
}

expected<job_graph> create_job_graph(const stream_graph& graph, std::optional<graph::job_id> id) {
  return job_graph_generator(graph, id).create_job_graph();
}

} // namespace flint::graph
