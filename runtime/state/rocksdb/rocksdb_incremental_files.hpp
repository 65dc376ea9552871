#pragma once
/// The files of incremental RocksDB checkpoints in checkpoint storage (the file half of Flink's
/// RocksIncrementalSnapshotStrategy and of its incremental restore): which SST files earlier
/// checkpoints uploaded, the upload of a local RocksDB checkpoint directory re-using them, and
/// the download of a handle's files into a local directory. No RocksDB calls here.

#include "runtime/common/expected.hpp"
#include "runtime/state/key_group_range.hpp"
#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace flint::state {

/// Local SST file name -> where checkpoint storage has it.
using uploaded_ssts = std::map<std::string, stream_state_handle>;

/// The SST files of one backend's checkpoints: those of a completed checkpoint a later snapshot
/// may refer to instead of uploading them again. Uploads report from their thread, the task's
/// thread reads and completes: guarded.
class rocksdb_sst_registry {
public:
  /// The SSTs of the last completed checkpoint (or of the restored one).
  uploaded_ssts confirmed() const;
  /// The id of the checkpoint `confirmed()` holds the SSTs of; -1 when none is known (nothing
  /// completed yet, or restored: the restore does not say which checkpoint it was).
  std::int64_t confirmed_id() const;
  /// Checkpoint `checkpoint_id` holds `ssts` (once its upload is done).
  void uploaded(std::int64_t checkpoint_id, uploaded_ssts ssts);
  /// Checkpoint `checkpoint_id` completed: its SSTs are the confirmed ones, older pending ones go.
  void complete(std::int64_t checkpoint_id);
  /// The instance was restored from a checkpoint holding `ssts`.
  void restored(uploaded_ssts ssts);

private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, uploaded_ssts> pending_;
  uploaded_ssts confirmed_;
  std::int64_t confirmed_id_ = -1;
};

/// What `upload_rocksdb_checkpoint` needs besides the files.
struct rocksdb_upload_context {
  std::int64_t checkpoint_id = 0;
  key_group_range key_groups;
  /// Random per instance: with the checkpoint id it keeps shared file names unique across
  /// attempts and restores that reuse a file prefix.
  std::string instance_id;
  /// SSTs already in checkpoint storage. Only those under `snapshot_target::shared_dir` — this
  /// job's own — are reused: a file of a savepoint or of another job's checkpoint it was restored
  /// from is uploaded again, so the job never refers to, and never deletes, a file it does not
  /// own (Flink's NO_CLAIM: the first checkpoint after such a restore is a full one).
  uploaded_ssts reusable;
  /// The checkpoint `reusable` came from (rocksdb_sst_registry::confirmed_id).
  std::int64_t base_checkpoint_id = -1;
};

/// Uploads the RocksDB checkpoint in `local_dir`: every `*.sst` not in `context.reusable` into
/// `target.shared_dir` as `<file prefix>-<instance id>-<checkpoint id>-<name>`, the other files
/// into `target.checkpoint_dir` as `<file prefix>-<name>`. Returns the incremental handle and
/// (into `ssts`) every SST the checkpoint holds. Errors name the file.
expected<keyed_state_handle> upload_rocksdb_checkpoint(const std::string& local_dir,
                                                       const snapshot_target& target,
                                                       const rocksdb_upload_context& context,
                                                       uploaded_ssts& ssts);

/// Copies the files of an incremental handle into `dir` (made) under their local names. A
/// missing or truncated file is an error naming it.
expected<unit> download_rocksdb_checkpoint(const keyed_state_handle& handle,
                                           const std::string& dir);

} // namespace flint::state
