#pragma once
/// Where the tasks of one process keep their local state: RocksDB's working files, one directory
/// per operator subtask and attempt (Flink's TaskExecutorLocalStateStoresManager under
/// `taskmanager.state.local.root-dirs`, java.io.tmpdir by default). The root is a private
/// directory, "flint-state-<pid>-XXXXXX" made with mkdtemp (mode 0700) under the temporary
/// directory when a task first needs it, so another user of the machine can neither read the
/// state nor place a link where the backend clears its directory. Removed when the last holder
/// (the streaming environment, its task factories and tasks) lets go.

#include <filesystem>
#include <mutex>

#include "runtime/common/expected.hpp"
#include "runtime/common/private_directory.hpp"

namespace flint::streaming {

class local_state_root {
public:
  local_state_root() = default;
  local_state_root(const local_state_root&) = delete;
  local_state_root& operator=(const local_state_root&) = delete;

  /// The root, made on the first call; thread-safe (tasks run on their own threads).
  expected<std::filesystem::path> path();

private:
  std::mutex mutex_;
  owned_directory dir_;
};

} // namespace flint::streaming
