#pragma once
/// Which retained checkpoints use each shared state file (RocksDB SSTs in `<job>/shared/`), and
/// when one no checkpoint uses may go (Flink's SharedStateRegistry with lastUsedCheckpointID).
///
/// A file is unused once no retained checkpoint refers to it, but a checkpoint still to
/// complete may: a backend reuses the files of the last checkpoint it heard completed, and that
/// notification can arrive late (checkpoint N-1's after snapshot N began, so N+1 reuses a file
/// N no longer holds). So an unused file goes only when every backend has moved past its last
/// user — the lowest `base_checkpoint_id` of the latest completed checkpoint is newer — and no
/// acknowledged snapshot of a pending checkpoint refers to it.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace flint::state {
struct checkpoint_metadata;
}

namespace flint::job_master::checkpoint {

class shared_state_registry {
public:
  /// Checkpoint `id` completed, or was recovered, referring to `files`.
  void register_checkpoint(std::int64_t id, const std::vector<std::string>& files);
  /// A retained checkpoint that referred to `files` was discarded.
  void unregister_checkpoint(const std::vector<std::string>& files);
  /// Whether a retained checkpoint refers to `file` (it surely exists).
  bool in_use(const std::string& file) const;
  /// Files no retained checkpoint uses, kept until nothing can refer to them again.
  std::size_t unused() const;

  /// Removes (through `remove`) every unused file whose last user is older than `lowest_base`
  /// and that `in_flight` does not hold; returns them.
  std::vector<std::string> delete_unused(std::int64_t lowest_base,
                                         const std::set<std::string>& in_flight,
                                         const std::function<void(const std::string&)>& remove);

private:
  struct entry {
    int references = 0;
    std::int64_t last_used = -1;
  };
  std::map<std::string, entry> entries_;
};

/// The oldest checkpoint whose shared files a backend of `latest` may still reuse: the lowest
/// base of its incremental handles; the largest id when it has none (nothing reuses).
std::int64_t lowest_base_checkpoint(const state::checkpoint_metadata& latest);

} // namespace flint::job_master::checkpoint
