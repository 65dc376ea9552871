#include "runtime/graph/stream_graph_hasher.hpp"

#include "runtime/graph/detail/murmur3.hpp"

#include <deque>
#include <set>

namespace flint::graph {

namespace {

/// Returns false when an input is not hashed yet; the node is then revisited later.
expected<bool> hash_node(const stream_graph& graph, const stream_node& node,
                         std::map<int, node_hash>& hashes) {
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
      if (!hashes.count(graph.edge(e).source_id))
        return false;
    detail::murmur3_128 hasher;
    // The position in the traversal, not the node id: ids shift when unrelated operators are
    // added, positions only when the topology changes.
    auto position = static_cast<std::int32_t>(hashes.size());
    hasher.put_int(position);
    for (std::size_t e : node.out_edges)
      if (graph.is_chainable(graph.edge(e)))
        hasher.put_int(position);
    hash = hasher.hash();
    for (std::size_t e : node.in_edges) {
      const node_hash& other = hashes.at(graph.edge(e).source_id);
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
    auto done = hash_node(graph, node, hashes);
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
  return hashes;
}

} // namespace flint::graph
