#pragma once
/// What a checkpoint holds, as plain values (Flink's state handles, TaskStateSnapshot and
/// OperatorSubtaskState): an operator subtask's keyed state per key group and its operator
/// (list) state, and whether the task had finished. Tasks send these in their acknowledgements,
/// the JobMaster keeps them in the checkpoint's `_metadata`, and a restored task gets its share
/// back in its TaskDeploymentDescriptor. No CAF, no Cap'n Proto (state_codec encodes them).

#include "runtime/graph/ids.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::state {

/// Bytes of state: a range of a file in checkpoint storage, or (no path) the bytes themselves,
/// as Flink's ByteStreamStateHandle keeps small state in the metadata.
struct stream_state_handle {
  /// Absolute path; empty: the state is `inline_data`.
  std::string path;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::vector<char> inline_data;

  bool is_inline() const noexcept { return path.empty(); }
  std::uint64_t state_size() const noexcept { return is_inline() ? inline_data.size() : size; }
  friend bool operator==(const stream_state_handle&, const stream_state_handle&) = default;
};

/// A file of an incremental snapshot: its name in the backend's local instance ("000012.sst",
/// "MANIFEST-000005") and where checkpoint storage keeps it.
struct named_file {
  /// A plain file name, no directories.
  std::string name;
  stream_state_handle handle;

  friend bool operator==(const named_file&, const named_file&) = default;
};

/// The keyed state of key groups [first_key_group, last_key_group] of one operator subtask
/// (Flink's KeyGroupsStateHandle): group `first_key_group + i` starts at byte
/// `key_group_offsets[i]` of `data` (relative to the handle's first byte) and ends where the next
/// one starts (or at the end of `data`).
///
/// Or, when `incremental`, a RocksDB instance's files (Flink's IncrementalRemoteKeyedStateHandle):
/// `shared_files` and `private_files` instead of `key_group_offsets` (empty) and `data` (unused).
/// Only the rocksdb backend restores such a handle.
struct keyed_state_handle {
  std::int32_t first_key_group = 0;
  std::int32_t last_key_group = -1;
  std::vector<std::uint64_t> key_group_offsets;
  stream_state_handle data;
  bool incremental = false;
  /// SST files under the job's `shared/` directory: later checkpoints of the same backend may
  /// refer to them too, so they go only when no retained checkpoint does (`shared_state_files`).
  std::vector<named_file> shared_files;
  /// The instance's other files (MANIFEST, CURRENT, OPTIONS), in this checkpoint's directory.
  std::vector<named_file> private_files;
  /// Incremental: the completed checkpoint whose shared files this snapshot could reuse (its
  /// backend's last confirmed one), -1 for none known. The JobMaster deletes a shared file no
  /// retained checkpoint uses only once every backend has moved past its last user
  /// (shared_state_registry).
  std::int64_t base_checkpoint_id = -1;

  /// Bytes of `data`, or of all the files of an incremental handle.
  std::uint64_t state_size() const noexcept;
  friend bool operator==(const keyed_state_handle&, const keyed_state_handle&) = default;
};

/// One operator of one subtask (Flink's OperatorSubtaskState).
struct operator_subtask_state {
  graph::operator_id operator_id;
  /// Keyed state; several handles once restored at another parallelism.
  std::vector<keyed_state_handle> keyed;
  /// Operator list state (Flink's ListState with SPLIT_DISTRIBUTE): a source's split positions,
  /// a sink's pending files. On rescaling, the entries of every old subtask are dealt out again.
  std::vector<std::vector<char>> list_entries;

  std::uint64_t state_size() const noexcept;
  /// No keyed handles and no list entries.
  bool empty() const noexcept { return keyed.empty() && list_entries.empty(); }
  friend bool operator==(const operator_subtask_state&, const operator_subtask_state&) = default;
};

/// What one task acknowledges for a checkpoint (Flink's TaskStateSnapshot).
struct task_state_snapshot {
  /// The chain's operators, head first.
  std::vector<operator_subtask_state> operators;
  /// The task had ended its input when the checkpoint was taken (Flink's
  /// FinishedOperatorSubtaskState): a restored finished task emits nothing.
  bool finished = false;

  std::uint64_t state_size() const noexcept;
  friend bool operator==(const task_state_snapshot&, const task_state_snapshot&) = default;
};

/// What a restored task starts from (Flink's JobManagerTaskRestore).
struct task_restore {
  std::int64_t checkpoint_id = 0;
  task_state_snapshot state;
  friend bool operator==(const task_restore&, const task_restore&) = default;
};

/// The state of one operator across its subtasks in a completed checkpoint (Flink's
/// OperatorState).
struct operator_state {
  graph::operator_id operator_id;
  /// The uid the user gave the operator, if any (for error messages).
  std::optional<std::string> uid;
  std::int32_t parallelism = 1;
  std::int32_t max_parallelism = 128;
  /// One per subtask index; a subtask with no entry held no state.
  std::vector<operator_subtask_state> subtasks;
  /// Per subtask index: the task had finished.
  std::vector<bool> finished;

  std::uint64_t state_size() const noexcept;
  /// Every subtask index in [0, parallelism) had finished.
  bool fully_finished() const noexcept;
  /// Some subtask holds keyed state handles.
  bool has_keyed_state() const noexcept;
  /// Some subtask holds keyed state or list entries.
  bool has_state() const noexcept;
  friend bool operator==(const operator_state&, const operator_state&) = default;
};

/// A completed checkpoint or savepoint: what `_metadata` holds (Flink's CheckpointMetadata).
struct checkpoint_metadata {
  std::int64_t checkpoint_id = 0;
  /// Trigger time, milliseconds since the epoch.
  std::int64_t timestamp = 0;
  bool is_savepoint = false;
  std::vector<operator_state> operators;

  std::uint64_t state_size() const noexcept;
  /// The operator's state, or nullptr.
  const operator_state* find(const graph::operator_id& id) const;
  friend bool operator==(const checkpoint_metadata&, const checkpoint_metadata&) = default;
};

/// The files in checkpoint storage's `shared/` directory that `metadata` refers to (the shared
/// files of its incremental handles), sorted, each once. The JobMaster deletes a shared file when
/// no retained checkpoint refers to it any more (Flink's SharedStateRegistry).
std::vector<std::string> shared_state_files(const checkpoint_metadata& metadata);
/// Every file the metadata refers to (keyed state data, incremental shared and private files).
std::vector<std::string> all_state_files(const checkpoint_metadata& metadata);

} // namespace flint::state
