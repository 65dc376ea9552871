#pragma once
/// Which part of a completed checkpoint each subtask of a job vertex starts from (Flink's
/// StateAssignmentOperation with KeyGroupRangeAssignment): keyed state by key-group range, list
/// state dealt round robin when the parallelism changed, and whether the subtask had finished.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::state {

/// The operators of one job vertex in the new program.
struct vertex_operators {
  /// The chain, head first.
  std::vector<graph::operator_id> operators;
  /// The uid of each operator, if any (for error messages); empty or one per operator.
  std::vector<std::optional<std::string>> uids;
  std::int32_t parallelism = 1;
  std::int32_t max_parallelism = 128;
};

/// One `task_restore` per subtask index of `vertex` (`checkpoint_id` set, `state.operators` the
/// chain in order). Subtask i of the new parallelism p gets, per operator:
/// - every keyed handle of an old subtask whose key-group range intersects
///   `key_group_range_for_operator(max_parallelism, p, i)` (whole; reading filters);
/// - at the same parallelism old subtask i's list entries, else entry k of all old subtasks'
///   entries (in subtask order) when k % p == i.
/// It is finished when, at the same parallelism, old subtask i of the head was, and after
/// rescaling when every old subtask was. An operator with keyed state whose checkpoint has
/// another max parallelism is an error.
expected<std::vector<task_restore>> assign_states(const checkpoint_metadata& metadata,
                                                  const vertex_operators& vertex);

/// Every operator with state in `metadata` is one of `job_operators`, unless
/// `allow_non_restored_state`; else Flink's "Failed to rollback to checkpoint/savepoint
/// <checkpoint_path>. Cannot map checkpoint/savepoint state for operator ..." error.
expected<unit> check_state_matched(const checkpoint_metadata& metadata,
                                   const std::vector<graph::operator_id>& job_operators,
                                   bool allow_non_restored_state,
                                   const std::string& checkpoint_path);

} // namespace flint::state
