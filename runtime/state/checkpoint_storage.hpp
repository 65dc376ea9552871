#pragma once
/// Checkpoint storage on a file system (Flink's FsCheckpointStorageAccess): per job
///
///     <checkpoints dir>/<job id>/chk-<n>/_metadata     one completed checkpoint
///                                 /chk-<n>/<files>      its exclusive state
///                                 /shared/              state shared by checkpoints
///                                 /taskowned/           state the tasks own
///
/// and savepoints in a directory of their own, `<target>/savepoint-<job id prefix>-<random>/`.
/// `_metadata` is written under a temporary name, synced and renamed, so a reader sees a whole
/// file or none.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <string>

namespace flint::state {

/// The file of a checkpoint's metadata in its directory (Flink's METADATA_FILE_NAME).
inline constexpr const char* metadata_file_name = "_metadata";

/// One job's checkpoint directories.
class checkpoint_storage {
public:
  /// Makes `<checkpoints_dir>/<job>/` with `shared/` and `taskowned/` in it (a leading
  /// "file://" is accepted). An error names the directory that could not be made.
  static expected<checkpoint_storage> create(std::string checkpoints_dir, graph::job_id job);

  graph::job_id job() const { return job_; }
  /// `<checkpoints dir>/<job id>`.
  std::string job_directory() const { return job_dir_; }
  /// `<job dir>/shared`.
  std::string shared_directory() const;
  /// `<job dir>/taskowned`.
  std::string task_owned_directory() const;
  /// `<job dir>/chk-<id>`.
  std::string checkpoint_directory(std::int64_t id) const;

  /// Makes the checkpoint's directory and returns it.
  expected<std::string> initialize_checkpoint(std::int64_t id);
  /// Writes `<chk dir of metadata.checkpoint_id>/_metadata` atomically; returns its path.
  expected<std::string> write_metadata(const checkpoint_metadata& metadata);
  /// Writes `<dir>/_metadata` atomically (making `dir` if needed); returns its path. An existing
  /// `_metadata` is not replaced: a completed checkpoint stays as it was.
  expected<std::string> write_metadata_to(const std::string& dir,
                                          const checkpoint_metadata& metadata);
  /// Removes the checkpoint's directory and everything in it; a missing one is no error.
  expected<unit> discard_checkpoint(std::int64_t id);

  /// Makes `<target_dir>/savepoint-<first 6 hex digits of the job id>-<12 random hex digits>`
  /// and returns it.
  expected<std::string> initialize_savepoint(const std::string& target_dir);

  /// A storage without a checkpoint directory: only savepoints and write_metadata_to.
  static checkpoint_storage unrooted(graph::job_id job) { return checkpoint_storage(job, {}); }

private:
  checkpoint_storage(graph::job_id job, std::string job_dir)
    : job_(job),
      job_dir_(std::move(job_dir)) {}

  graph::job_id job_;
  std::string job_dir_;
};

/// `<checkpoint_dir>/<name>`: a file of state exclusive to one checkpoint.
/// `_metadata` written into `dir` (made if need be) atomically, without a storage: savepoints
/// of a job that has no checkpoint directory. Its path.
expected<std::string> write_metadata_into(const std::string& dir,
                                          const checkpoint_metadata& metadata);
/// A fresh `<target_dir>/savepoint-<6 hex of the job id>-<12 random hex>` for `job`.
expected<std::string> make_savepoint_directory(const std::string& target_dir, graph::job_id job);

std::string exclusive_state_file(const std::string& checkpoint_dir, const std::string& name);

/// Reads a `_metadata` file, or the `_metadata` in a checkpoint or savepoint directory. Errors
/// always name the file: "Cannot read checkpoint metadata /x/chk-3/_metadata: truncated (12 of
/// 340 bytes)".
expected<checkpoint_metadata> load_checkpoint_metadata(const std::string& path);

} // namespace flint::state
