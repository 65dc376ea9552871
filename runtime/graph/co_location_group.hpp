#pragma once
/// A co-location group of the JobGraph (§3.5.2).

#include <cstddef>
#include <string>
#include <vector>

namespace flint::graph {

/// Vertices whose i-th subtasks must run in the same slot (hard constraint, §3.5.2).
struct co_location_group {
  std::string key;
  std::vector<std::size_t> vertices;

  friend bool operator==(const co_location_group&, const co_location_group&) = default;
};

} // namespace flint::graph
