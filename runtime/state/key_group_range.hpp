#pragma once
/// Which key groups a subtask owns (Flink's KeyGroupRange and the range half of
/// KeyGroupRangeAssignment). Shared by the tasks that write keyed state and the state assignment
/// that deals it out again at a restore.

#include <algorithm>
#include <cstdint>

namespace flint::state {

/// The key groups [first, last] of one operator subtask; empty when last < first.
struct key_group_range {
  int first = 0;
  int last = -1;
  int size() const { return last - first + 1; }
  bool empty() const { return last < first; }
  bool contains(int key_group) const { return key_group >= first && key_group <= last; }
  /// The key groups in both ranges (empty if none).
  key_group_range intersect(const key_group_range& other) const {
    return {std::max(first, other.first), std::min(last, other.last)};
  }
  friend bool operator==(const key_group_range&, const key_group_range&) = default;
};

/// operator_index = key_group * parallelism / max_parallelism.
inline int operator_index_for_key_group(int max_parallelism, int parallelism, int key_group) {
  return static_cast<int>(static_cast<std::int64_t>(key_group) * parallelism / max_parallelism);
}

/// Flink's computeKeyGroupRangeForOperatorIndex.
inline key_group_range key_group_range_for_operator(int max_parallelism, int parallelism,
                                                    int index) {
  auto mp = static_cast<std::int64_t>(max_parallelism);
  int first = static_cast<int>((index * mp + parallelism - 1) / parallelism);
  int last = static_cast<int>(((index + 1) * mp - 1) / parallelism);
  return {first, last};
}

} // namespace flint::state
