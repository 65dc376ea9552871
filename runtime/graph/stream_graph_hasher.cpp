#include "runtime/graph/stream_graph_hasher.hpp"

#include "runtime/graph/detail/murmur3.hpp"

#include <deque>
#include <set>

namespace flint::graph {

namespace {

/// A node with id_follows_consumer, one input, one output and a consumer with no other input is
/// hashed as if absent: its consumers see its input in its place, and its input's edge to it
/// counts as its own edge onward.
bool hashed_as_absent(const stream_graph& graph, const stream_node& node) {
  return node.id_follows_consumer && !node.uid && node.in_edges.size() == 1
      && node.out_edges.size() == 1
      && graph.node(graph.edge(node.out_edges.front()).target_id).in_edges.size() == 1;
}

/// The node whose hash stands for `id` (itself unless it is hashed as absent).
int standing_for(const std::map<int, int>& absent, int id) {
  for (auto it = absent.find(id); it != absent.end(); it = absent.find(id))
    id = it->second;
  return id;
}

/// Whether `e` chains, seen through the nodes hashed as absent (the user's edge onward).
bool chainable_as_written(const stream_graph& graph, std::size_t e) {
  const stream_edge* edge = &graph.edge(e);
  while (hashed_as_absent(graph, graph.node(edge->target_id)))
    edge = &graph.edge(graph.node(edge->target_id).out_edges.front());
  return graph.is_chainable(*edge);
}

/// Returns false when an input is not hashed yet; the node is then revisited later.
expected<bool> hash_node(const stream_graph& graph, const stream_node& node,
                         const std::map<int, int>& absent, std::map<int, node_hash>& hashes) {
  node_hash hash{};
  if (node.uid) {
    detail::murmur3_128 hasher;
    hasher.put_string(*node.uid);
    hash = hasher.hash();
    for (const auto& [other_id, other_hash] : hashes)
      if (other_hash == hash)
        return make_error(errc::invalid_argument,
                          "Hash collision on user-specified ID \"" + *node.uid +
                              "\". Most likely cause is a non-unique ID. Please check that all IDs specified via "
                              "`uid(String)` are unique.");
  } else {
    for (std::size_t e : node.in_edges)
      if (!hashes.count(standing_for(absent, graph.edge(e).source_id)))
        return false;
    detail::murmur3_128 hasher;
    // The position in the traversal, not the node id: ids shift when unrelated operators are
    // added, positions only when the topology changes.
    auto position = static_cast<std::int32_t>(hashes.size());
    hasher.put_int(position);
    for (std::size_t e : node.out_edges)
      if (chainable_as_written(graph, e))
        hasher.put_int(position);
    hash = hasher.hash();
    for (std::size_t e : node.in_edges) {
      const node_hash& other = hashes.at(standing_for(absent, graph.edge(e).source_id));
      for (std::size_t j = 0; j < hash.size(); ++j)
        hash[j] = static_cast<std::uint8_t>((hash[j] * 37) ^ other[j]);
    }
  }
  if (!hashes.emplace(node.id, hash).second)
    return make_error(errc::internal, "Unexpected state. Tried to add node hash twice.");
  return true;
}

} // namespace

expected<std::map<int, node_hash>> hash_stream_graph(const stream_graph& graph) {
  std::map<int, node_hash> hashes;
  // Nodes hashed as absent, to the node standing for them, and their consumers.
  std::map<int, int> absent;
  std::vector<std::pair<int, int>> derived;
  std::set<int> visited;
  std::deque<int> remaining;
  // std::set iterates sources in id order, the determinism Flink gets by sorting.
  for (int source : graph.sources()) {
    remaining.push_back(source);
    visited.insert(source);
  }
  while (!remaining.empty()) {
    int current = remaining.front();
    remaining.pop_front();
    const stream_node& node = graph.node(current);
    if (hashed_as_absent(graph, node)) {
      // Its consumer takes its place in the traversal (the front: where the consumer would
      // have been without it), so every position is the one of the graph as written.
      int input = graph.edge(node.in_edges.front()).source_id;
      int consumer = graph.edge(node.out_edges.front()).target_id;
      absent.emplace(current, input);
      derived.emplace_back(current, consumer);
      if (visited.insert(consumer).second)
        remaining.push_front(consumer);
      continue;
    }
    auto done = hash_node(graph, node, absent, hashes);
    if (!done)
      return done.error();
    if (*done) {
      for (std::size_t e : node.out_edges) {
        int child = graph.edge(e).target_id;
        if (visited.insert(child).second)
          remaining.push_back(child);
      }
    } else {
      // Another input will queue it again once that input is hashed.
      visited.erase(current);
    }
  }
  // A node hashed as absent gets its consumer's hash, salted: stable whenever its consumer's is.
  for (auto it = derived.rbegin(); it != derived.rend(); ++it) {
    auto consumer = hashes.find(it->second);
    if (consumer == hashes.end())
      continue;
    detail::murmur3_128 hasher;
    hasher.put_string("id follows consumer");
    for (auto byte : consumer->second)
      hasher.put_int(byte);
    hashes.emplace(it->first, hasher.hash());
  }
  return hashes;
}

} // namespace flint::graph
