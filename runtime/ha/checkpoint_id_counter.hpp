#pragma once
/// Flink's CheckpointIDCounter: hands out a job's checkpoint ids, increasing across JobMaster
/// failovers, so a new leader never reuses the id (and so the chk-N directory) of a checkpoint
/// an old leader may have completed.
///
/// Every method may be called from any thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/common/expected.hpp"

namespace flint::ha {

class zookeeper_client;

class checkpoint_id_counter {
public:
  virtual ~checkpoint_id_counter() = default;
  /// The next id, counting it as used; the first call on a new counter returns 1.
  virtual expected<std::int64_t> get_and_increment() = 0;
  /// The next id get_and_increment would return.
  virtual expected<std::int64_t> get() = 0;
  /// The next get_and_increment returns `next` (Flink: restoring from a savepoint/checkpoint N
  /// sets N + 1).
  virtual expected<unit> set_count(std::int64_t next) = 0;
  /// Globally terminal: removes the counter's node. Suspended (not terminal): leaves it for the
  /// next leader.
  virtual expected<unit> shutdown(bool globally_terminal) = 0;
};

/// In memory (Flink's StandaloneCheckpointIDCounter): an atomic, lost with the process.
class standalone_checkpoint_id_counter final : public checkpoint_id_counter {
public:
  expected<std::int64_t> get_and_increment() override;
  expected<std::int64_t> get() override;
  expected<unit> set_count(std::int64_t next) override;
  expected<unit> shutdown(bool globally_terminal) override;

private:
  std::atomic<std::int64_t> next_{1};
};

/// Flink's ZooKeeperCheckpointIDCounter: the next id as decimal text in a persistent node at
/// `path` (e.g. "/flink/<cluster>/jobs/<job>/checkpoint_id_counter"), incremented by a
/// compare-and-swap on the node's version (a conditional set; losing the race is retried), so
/// any number of counters, in any process, on the same path never return the same id.
/// The node is created with its parents ("1") on first use; an existing node is read, not reset.
class zookeeper_checkpoint_id_counter final : public checkpoint_id_counter {
public:
  zookeeper_checkpoint_id_counter(std::shared_ptr<zookeeper_client> client, std::string path);

  expected<std::int64_t> get_and_increment() override;
  expected<std::int64_t> get() override;
  expected<unit> set_count(std::int64_t next) override;
  /// Globally terminal: removes the node, then its parent (the job's node) if that is empty.
  expected<unit> shutdown(bool globally_terminal) override;

  const std::string& path() const { return path_; }

private:
  /// Creates the node with "1" unless it exists.
  expected<unit> ensure_node();
  /// The node's count and version.
  struct reading {
    std::int64_t next = 0;
    std::int32_t version = 0;
  };
  expected<reading> read();

  std::shared_ptr<zookeeper_client> client_;
  std::string path_;
};

} // namespace flint::ha
