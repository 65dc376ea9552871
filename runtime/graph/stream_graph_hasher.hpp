#pragma once
/// Deterministic StreamNode hashes, which become JobVertex and operator ids (Flink's
/// StreamGraphHasherV2).
///
/// A node with a `uid` hashes the uid alone, so it keeps its id however the program around it
/// changes. Other nodes hash their breadth-first position, once more per chainable output, then
/// mix in their inputs' hashes. The byte feed and mixing match Flink's, so the ids match the ones
/// Flink prints for the same program (the seed's WordCount plan is a test).

#include "runtime/common/expected.hpp"
#include "runtime/graph/stream_graph.hpp"

#include <array>
#include <cstdint>
#include <map>

namespace flint::graph {

/// 16 bytes of MurmurHash3_x64_128.
using node_hash = std::array<std::uint8_t, 16>;

/// Hashes every node reachable from the sources. Fails on two equal uids (Flink's "Hash
/// collision on user-specified ID").
expected<std::map<int, node_hash>> hash_stream_graph(const stream_graph& graph);

} // namespace flint::graph
