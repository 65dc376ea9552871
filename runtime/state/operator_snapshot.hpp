#pragma once
/// What an operator hands over at a checkpoint and gets back at a restore, in memory (the
/// synchronous part of Flink's snapshotState and its initializeState). The task writes an
/// `operator_snapshot` to checkpoint storage off its thread (`keyed_state_files.hpp`), and builds
/// an `operator_state_restore` from the handles its TaskDeploymentDescriptor carries.

#include "runtime/common/expected.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace flint::state {

struct snapshot_target; // keyed_state_backend.hpp

/// One operator's state at a checkpoint barrier.
struct operator_snapshot {
  /// Keyed state, one serialized buffer per key group of the subtask's range: buffer `i` is key
  /// group `first_key_group + i`. Empty: the operator has no keyed state.
  std::int32_t first_key_group = 0;
  std::vector<std::vector<char>> key_groups;
  /// Operator list state entries.
  std::vector<std::vector<char>> list_entries;
  /// Keyed state held by a keyed_state_backend: its asynchronous part, which writes the state and
  /// returns the handles (instead of `key_groups`).
  std::function<expected<std::vector<keyed_state_handle>>(const snapshot_target&)> keyed_upload;
  /// Work the asynchronous part must finish before the task acknowledges (a sink's fsync of the
  /// files it closed at the barrier): the checkpoint only counts once it is done.
  std::function<expected<unit>()> before_acknowledge;

  bool empty() const noexcept {
    return key_groups.empty() && list_entries.empty() && !keyed_upload && !before_acknowledge;
  }
};

/// One operator's state to start from.
class operator_state_restore {
public:
  operator_state_restore() = default;
  /// `present`: the checkpoint holds this operator (a source then resumes from its entries,
  /// even none; an operator new to the job starts afresh).
  operator_state_restore(operator_subtask_state state, bool finished, bool present)
    : state_(std::move(state)),
      finished_(finished),
      present_(present) {}

  /// The task had finished in the restored checkpoint.
  bool finished() const noexcept { return finished_; }
  bool present() const noexcept { return present_; }
  const std::vector<std::vector<char>>& list_entries() const noexcept {
    return state_.list_entries;
  }
  bool has_keyed_state() const noexcept { return !state_.keyed.empty(); }
  /// The handles themselves (a keyed_state_backend restores from them).
  const std::vector<keyed_state_handle>& keyed_handles() const noexcept { return state_.keyed; }
  /// Calls `f(key_group, bytes)` for every key group in [first, last] held by the handles
  /// (reading their files); an unreadable or truncated file is an error naming it.
  expected<unit> for_each_key_group(
    std::int32_t first, std::int32_t last,
    const std::function<void(std::int32_t, std::span<const char>)>& f) const;

private:
  operator_subtask_state state_;
  bool finished_ = false;
  bool present_ = false;
};

} // namespace flint::state
