#pragma once
/// A slot sharing group of the JobGraph (§3.5.1).

#include <cstddef>
#include <string>
#include <vector>

namespace flint::graph {

/// Vertices whose subtasks may share a slot (soft constraint, §3.5.1).
struct slot_sharing_group {
  std::string name;
  /// Indices into `job_graph::vertices`.
  std::vector<std::size_t> vertices;

  friend bool operator==(const slot_sharing_group&, const slot_sharing_group&) = default;
};

} // namespace flint::graph
