#include "runtime/graph/stream_graph_generator.hpp"

#include <algorithm>
#include <functional>
#include <set>

namespace flint::graph {

namespace {

int max_id(const std::vector<std::shared_ptr<transformation>>& roots) {
  int result = 0;
  std::set<const transformation*> seen;
  std::function<void(const transformation&)> visit = [&](const transformation& t) {
    if (!seen.insert(&t).second)
      return;
    result = std::max(result, t.id());
    for (const auto& in : t.inputs())
      visit(*in);
  };
  for (const auto& t : roots)
    visit(*t);
  return result;
}

} // namespace

stream_graph_generator::stream_graph_generator(
  std::vector<std::shared_ptr<transformation>> transformations, stream_graph_config config)
  : transformations_(std::move(transformations)),
    graph_(std::move(config)) {
  // Flink takes virtual ids from the same global counter; continuing after the largest
  // transformation id keeps them unique and deterministic.
  next_virtual_id_ = max_id(transformations_) + 1;
}

expected<stream_graph> stream_graph_generator::generate() {
  for (const auto& t : transformations_) {
    auto ids = transform(t);
    if (!ids)
      return ids.error();
  }
  // A key-group partitioner routes to the consumer's key groups, so it takes the consumer's max
  // parallelism (or the default the ExecutionJobVertex will compute).
  for (std::size_t i = 0; i < graph_.edges().size(); ++i) {
    auto& edge = graph_.edge(i);
    if (edge.partitioner.kind != partitioner_kind::key_group)
      continue;
    const auto& target = graph_.node(edge.target_id);
    edge.partitioner.max_parallelism = target.max_parallelism > 0
      ? target.max_parallelism
      : compute_default_max_parallelism(target.parallelism);
  }
  return std::move(graph_);
}

int stream_graph_generator::resolve(int id) const {
  const auto& virtuals = graph_.virtual_partition_nodes();
  for (auto it = virtuals.find(id); it != virtuals.end(); it = virtuals.find(id))
    id = it->second.original_id;
  return id;
}

std::string stream_graph_generator::determine_slot_sharing_group(
  const transformation& t, const std::vector<int>& input_ids) const {
  if (t.slot_sharing_group())
    return *t.slot_sharing_group();
  std::optional<std::string> input_group;
  for (int id : input_ids) {
    const std::string& group = graph_.node(resolve(id)).slot_sharing_group;
    if (!input_group)
      input_group = group;
    else if (*input_group != group)
      return "default";
  }
  return input_group.value_or("default");
}

expected<std::vector<int>> stream_graph_generator::transform(
  const std::shared_ptr<transformation>& t) {
  if (auto it = already_transformed_.find(t.get()); it != already_transformed_.end())
    return it->second;

  std::vector<int> input_ids;
  for (const auto& input : t->inputs()) {
    auto ids = transform(input);
    if (!ids)
      return ids.error();
    input_ids.insert(input_ids.end(), ids->begin(), ids->end());
  }
  // A diamond may have transformed `t` while transforming its inputs.
  if (auto it = already_transformed_.find(t.get()); it != already_transformed_.end())
    return it->second;

  std::vector<int> result;
  switch (t->kind()) {
    case transformation_kind::partition:
      for (int input : input_ids) {
        int virtual_id = next_virtual_id_++;
        auto added =
          graph_.add_virtual_partition_node(input, virtual_id, t->partitioner(), t->shuffle_mode());
        if (!added)
          return added.error();
        result.push_back(virtual_id);
      }
      break;
    case transformation_kind::union_of: result = input_ids; break;
    case transformation_kind::side_output:
      for (int input : input_ids) {
        int virtual_id = next_virtual_id_++;
        auto added = graph_.add_virtual_side_output_node(input, virtual_id, t->output_tag());
        if (!added)
          return added.error();
        result.push_back(virtual_id);
      }
      break;
    case transformation_kind::source:
    case transformation_kind::two_input:
    case transformation_kind::one_input:
    case transformation_kind::sink: {
      auto ids = transform_operator(*t, input_ids);
      if (!ids)
        return ids.error();
      result = std::move(*ids);
      break;
    }
  }
  already_transformed_.emplace(t.get(), result);
  return result;
}

expected<std::vector<int>> stream_graph_generator::transform_operator(
  const transformation& t, const std::vector<int>& input_ids) {
  if (t.kind() == transformation_kind::source && !input_ids.empty())
    return make_error(errc::invalid_argument, "Source '" + t.name() + "' must not have inputs");
  if (t.kind() != transformation_kind::source && input_ids.empty())
    return make_error(errc::invalid_argument, "Operator '" + t.name() + "' has no input");

  stream_node node;
  node.id = t.id();
  switch (t.kind()) {
    case transformation_kind::source: node.operator_name = "Source: " + t.name(); break;
    case transformation_kind::sink: node.operator_name = "Sink: " + t.name(); break;
    default: node.operator_name = t.name(); break;
  }
  node.uid = t.uid();
  node.parallelism = t.parallelism();
  node.max_parallelism =
    t.max_parallelism() > 0 ? t.max_parallelism() : graph_.config().max_parallelism;
  node.slot_sharing_group = determine_slot_sharing_group(t, input_ids);
  node.co_location_group = t.co_location_group();
  node.chaining_strategy = t.chaining_strategy();
  node.id_follows_consumer = t.id_follows_consumer();
  node.task_kind = t.kind() == transformation_kind::source ? task_kind::source_stream_task
                                                           : task_kind::one_input_stream_task;
  node.buffer_timeout =
    t.buffer_timeout() >= 0 ? t.buffer_timeout() : graph_.config().buffer_timeout;
  node.factory = t.factory();
  auto added = graph_.add_node(std::move(node));
  if (!added)
    return added.error();
  if (t.kind() == transformation_kind::sink)
    graph_.add_sink(t.id());
  if (t.kind() == transformation_kind::two_input) {
    // Flink's TwoInputTransformation: edges from the first input are type 1, the second's type 2
    // (the inputs are transformed already: these look-ups only read the memo).
    if (t.inputs().size() != 2)
      return make_error(errc::invalid_argument,
                        "Two-input operator '" + t.name() + "' needs exactly two inputs");
    for (int type = 1; type <= 2; ++type) {
      auto ids = transform(t.inputs()[static_cast<std::size_t>(type - 1)]);
      if (!ids)
        return ids.error();
      for (int input : *ids)
        if (auto edge = graph_.add_edge(input, t.id(), type); !edge)
          return edge.error();
    }
    return std::vector<int>{t.id()};
  }
  for (int input : input_ids) {
    auto edge = graph_.add_edge(input, t.id(), 0);
    if (!edge)
      return edge.error();
  }
  return std::vector<int>{t.id()};
}

expected<stream_graph> generate_stream_graph(
  std::vector<std::shared_ptr<transformation>> transformations, stream_graph_config config) {
  return stream_graph_generator(std::move(transformations), std::move(config)).generate();
}

} // namespace flint::graph
