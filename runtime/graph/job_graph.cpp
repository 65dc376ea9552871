#include "runtime/graph/job_graph.hpp"

#include <cctype>
#include <string>

#include <deque>

namespace flint::graph {

std::optional<std::size_t> job_graph::find_vertex(const job_vertex_id& id) const {
  for (std::size_t i = 0; i < vertices.size(); ++i)
    if (vertices[i].id == id)
      return i;
  return std::nullopt;
}

expected<std::vector<std::size_t>> job_graph::vertices_sorted_topologically() const {
  std::vector<std::size_t> missing(vertices.size());
  std::deque<std::size_t> ready;
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    missing[v] = vertices[v].inputs.size();
    if (missing[v] == 0)
      ready.push_back(v);
  }
  std::vector<std::size_t> order;
  order.reserve(vertices.size());
  while (!ready.empty()) {
    std::size_t v = ready.front();
    ready.pop_front();
    order.push_back(v);
    for (std::size_t ds : vertices[v].produced_data_sets)
      for (std::size_t e : data_sets[ds].consumers)
        if (--missing[edges[e].target] == 0)
          ready.push_back(edges[e].target);
  }
  if (order.size() != vertices.size())
    return make_error(errc::invalid_argument, "The job graph is cyclic.");
  return order;
}

expected<unit> job_graph::validate() const {
  auto bad = [](std::string what) {
    return make_error(errc::invalid_argument, "invalid job graph: " + what);
  };
  for (const auto& edge : edges)
    if (edge.source >= data_sets.size() || edge.target >= vertices.size())
      return bad("an edge points outside the graph");
  for (std::size_t d = 0; d < data_sets.size(); ++d) {
    if (data_sets[d].producer >= vertices.size())
      return bad("a data set has a missing producer");
    for (std::size_t e : data_sets[d].consumers)
      if (e >= edges.size() || edges[e].source != d)
        return bad("a data set has a consumer edge that does not read it");
  }
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const auto& vertex = vertices[v];
    // Flink's upper bound (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM): a decoded
    // graph's parallelism sizes the execution graph, so it is checked before anything is made.
    if (vertex.parallelism < 1 || vertex.parallelism > 32768)
      return bad("vertex " + vertex.name + " has parallelism "
                 + std::to_string(vertex.parallelism) + " (1 to 32768)");
    if (vertex.max_parallelism > 32768)
      return bad("vertex " + vertex.name + " has max parallelism "
                 + std::to_string(vertex.max_parallelism) + " (at most 32768)");
    if (vertex.slot_sharing_group >= slot_sharing_groups.size())
      return bad("vertex " + vertex.name + " names a missing slot sharing group");
    if (vertex.co_location_group && *vertex.co_location_group >= co_location_groups.size())
      return bad("vertex " + vertex.name + " names a missing co-location group");
    for (std::size_t e : vertex.inputs)
      if (e >= edges.size() || edges[e].target != v)
        return bad("vertex " + vertex.name + " has an input edge that does not point at it");
    for (std::size_t ds : vertex.produced_data_sets)
      if (ds >= data_sets.size() || data_sets[ds].producer != v)
        return bad("vertex " + vertex.name + " produces a data set it is not the producer of");
    for (const auto& op : vertex.operators)
      for (std::size_t e : op.non_chained_outputs)
        if (e >= edges.size())
          return bad("operator " + op.name + " feeds a missing edge");
  }
  auto check_members = [&](const std::vector<std::size_t>& members) {
    for (std::size_t v : members)
      if (v >= vertices.size())
        return false;
    return true;
  };
  for (const auto& g : slot_sharing_groups)
    if (!check_members(g.vertices))
      return bad("slot sharing group " + g.name + " names a missing vertex");
  for (const auto& g : co_location_groups)
    if (!check_members(g.vertices))
      return bad("co-location group " + g.key + " names a missing vertex");
  if (!check_members(checkpointing.trigger_vertices) || !check_members(checkpointing.ack_vertices)
      || !check_members(checkpointing.commit_vertices))
    return bad("checkpoint settings name a missing vertex");
  auto sorted = vertices_sorted_topologically();
  if (!sorted)
    return sorted.error();
  return unit{};
}

expected<unit> check_same_program(const job_graph& submitted, const job_graph& rebuilt) {
  auto differs = [](const std::string& what) {
    return make_error(
      errc::invalid_argument,
      "the rebuilt program differs from the submitted one (graph building must be deterministic): "
        + what);
  };
  if (submitted.vertices.size() != rebuilt.vertices.size())
    return differs(std::to_string(rebuilt.vertices.size()) + " job vertices instead of "
                   + std::to_string(submitted.vertices.size()));
  for (std::size_t v = 0; v < submitted.vertices.size(); ++v) {
    const job_vertex& a = submitted.vertices[v];
    const job_vertex& b = rebuilt.vertices[v];
    if (a.id != b.id || a.name != b.name)
      return differs("job vertex " + std::to_string(v) + " is '" + b.name + "' (" + b.id.to_string()
                     + ") instead of '" + a.name + "' (" + a.id.to_string() + ")");
    if (a.parallelism != b.parallelism)
      return differs("job vertex '" + a.name + "' has parallelism " + std::to_string(b.parallelism)
                     + " instead of " + std::to_string(a.parallelism));
    if (a.operators.size() != b.operators.size())
      return differs("job vertex '" + a.name + "' chains " + std::to_string(b.operators.size())
                     + " operators instead of " + std::to_string(a.operators.size()));
    for (std::size_t o = 0; o < a.operators.size(); ++o) {
      const chained_operator& x = a.operators[o];
      const chained_operator& y = b.operators[o];
      if (x.id != y.id || x.stream_node_id != y.stream_node_id || x.kind != y.kind)
        return differs("operator '" + x.name + "' (node " + std::to_string(x.stream_node_id) + ", "
                       + x.kind + ") is '" + y.name + "' (node " + std::to_string(y.stream_node_id)
                       + ", " + y.kind + ")");
    }
  }
  if (submitted.edges != rebuilt.edges || submitted.data_sets.size() != rebuilt.data_sets.size())
    return differs("the job edges differ");
  return unit{};
}

const char* to_string(recovery_claim_mode mode) {
  return mode == recovery_claim_mode::claim ? "CLAIM" : "NO_CLAIM";
}

std::optional<recovery_claim_mode> parse_recovery_claim_mode(std::string_view text) {
  std::string upper;
  for (char c : text)
    upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "NO_CLAIM")
    return recovery_claim_mode::no_claim;
  if (upper == "CLAIM")
    return recovery_claim_mode::claim;
  return std::nullopt;
}

} // namespace flint::graph
