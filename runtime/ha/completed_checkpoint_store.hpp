#pragma once
/// Flink's CompletedCheckpointStore, as pointers: which completed checkpoints of a job a new
/// JobMaster may restore from. The checkpoints' state and metadata already live in durable
/// checkpoint storage (chk-N/_metadata); the store only records, atomically with respect to the
/// job's leader, that checkpoint N completed and where its metadata is.
///
/// Every method may be called from any thread.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "runtime/common/expected.hpp"

namespace flint::ha {

class zookeeper_client;

struct checkpoint_pointer {
  std::int64_t checkpoint_id = 0;
  /// The path of chk-N/_metadata.
  std::string metadata_path;

  friend bool operator==(const checkpoint_pointer&, const checkpoint_pointer&) = default;
};

class completed_checkpoint_store {
public:
  virtual ~completed_checkpoint_store() = default;
  /// Records a completed checkpoint; the same id again replaces its path. invalid_argument for a
  /// negative id or an empty path.
  virtual expected<unit> add(const checkpoint_pointer& p) = 0;
  /// Forgets a checkpoint (subsumed or discarded). Missing is fine.
  virtual expected<unit> remove(std::int64_t checkpoint_id) = 0;
  /// Every recorded checkpoint, ascending by id.
  virtual expected<std::vector<checkpoint_pointer>> checkpoints() = 0;
  /// Globally terminal: removes every entry and the job's node. Suspended: leaves everything
  /// for the next leader.
  virtual expected<unit> shutdown(bool globally_terminal) = 0;
};

/// In memory (Flink's StandaloneCompletedCheckpointStore): lost with the process.
class standalone_completed_checkpoint_store final : public completed_checkpoint_store {
public:
  expected<unit> add(const checkpoint_pointer& p) override;
  expected<unit> remove(std::int64_t checkpoint_id) override;
  expected<std::vector<checkpoint_pointer>> checkpoints() override;
  expected<unit> shutdown(bool globally_terminal) override;

private:
  std::mutex mutex_;
  std::map<std::int64_t, std::string> entries_;
};

/// Flink's ZooKeeperCompletedCheckpointStore (with ZooKeeperCheckpointStoreUtil's names): under
/// `path` (e.g. "/flink/<cluster>/jobs/<job>/checkpoints") one persistent child per checkpoint,
/// named by its id zero-padded to 19 digits (so names sort like ids), whose data is the path of
/// a file `<storage_dir>/<name>` holding the metadata path (Flink: a RetrievableStateHandle in
/// the storage directory). The metadata lies wherever the job's checkpoints go; ZooKeeper only
/// ever names a file in the storage directory, so a tampered node cannot send the JobMaster to
/// another file: a node pointing outside `storage_dir` fails checkpoints() (rejected, naming the
/// path; never skipped, which would silently restore an older checkpoint) and is removed by
/// remove() and shutdown() without touching the file it names.
///
/// A child that is not a 19-digit id, or whose data is empty or not a path (control
/// characters), is skipped by checkpoints() with a warning on `log`: a half-written or foreign
/// node must not stop a job from recovering from the good ones.
///
/// add() writes the file before the node; remove() removes the node before the file.
class zookeeper_completed_checkpoint_store final : public completed_checkpoint_store {
public:
  /// `storage_dir` (made absolute) holds this job's pointer files, e.g.
  /// `<storageDir>/<cluster-id>/completed_checkpoints/<job>`.
  zookeeper_completed_checkpoint_store(std::shared_ptr<zookeeper_client> client, std::string path,
                                       std::filesystem::path storage_dir,
                                       std::shared_ptr<spdlog::logger> log);

  expected<unit> add(const checkpoint_pointer& p) override;
  expected<unit> remove(std::int64_t checkpoint_id) override;
  expected<std::vector<checkpoint_pointer>> checkpoints() override;
  /// Globally terminal: removes every child and `path`, then its parent (the job's node) if that
  /// is empty.
  expected<unit> shutdown(bool globally_terminal) override;

  /// The child name of a checkpoint id: 19 digits, zero-padded ("0000000000000000042").
  static std::string checkpoint_id_to_name(std::int64_t checkpoint_id);
  const std::string& path() const { return path_; }
  /// `<storage_dir>/<19-digit id>`: the file the checkpoint's node points to.
  std::filesystem::path file_of(std::int64_t checkpoint_id) const;

private:
  /// Removes the child `name` and the file it points to (if that lies in storage_dir_) and
  /// this store's own file of that name.
  expected<unit> remove_child(const std::string& name);

  std::shared_ptr<zookeeper_client> client_;
  std::string path_;
  std::filesystem::path storage_dir_;
  std::shared_ptr<spdlog::logger> log_;
};

} // namespace flint::ha
