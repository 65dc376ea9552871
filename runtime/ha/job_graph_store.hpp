#pragma once
/// Flink's JobGraphStore: the JobGraphs of submitted jobs that have not reached a globally
/// terminal state, so a new leading Dispatcher can recover and resume them.
///
/// Two versions, as in Flink:
/// - standalone_job_graph_store (StandaloneJobGraphStore's role): in memory. A non-HA cluster
///   recovers nothing across a JobManager restart, but the Dispatcher's code path stays the same.
/// - zookeeper_job_graph_store (ZooKeeperJobGraphStore over ZooKeeperStateHandleStore): the graph's
///   bytes in a file in the storage directory and, in ZooKeeper, a small pointer to that file.
///   ZooKeeper holds only pointers because its nodes are meant to stay small (1 MB at most) and
///   every node is replicated to every server; the storage directory is durable shared storage.
///
/// Every method may be called from any thread.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"

namespace flint::ha {

class zookeeper_client;

class job_graph_store {
public:
  virtual ~job_graph_store() = default;
  /// Adds or replaces the job's graph.
  virtual expected<unit> put(const graph::job_graph& graph) = 0;
  /// The stored graph; a clear error naming the job and the file when it is missing or corrupt.
  virtual expected<graph::job_graph> recover(const graph::job_id& job) = 0;
  /// The jobs with a stored graph, in no particular order.
  virtual expected<std::vector<graph::job_id>> job_ids() = 0;
  /// Removes the graph (a job that reached a globally terminal state). Missing is fine.
  virtual expected<unit> remove(const graph::job_id& job) = 0;
};

/// In memory: what non-HA clusters use (nothing is recovered across restarts).
class standalone_job_graph_store final : public job_graph_store {
public:
  expected<unit> put(const graph::job_graph& graph) override;
  expected<graph::job_graph> recover(const graph::job_id& job) override;
  expected<std::vector<graph::job_id>> job_ids() override;
  expected<unit> remove(const graph::job_id& job) override;

private:
  std::mutex mutex_;
  std::map<graph::job_id, graph::job_graph> graphs_;
};

/// The graph of job J encoded (graph/codec/job_graph_codec.hpp) in `<storage_dir>/job_graphs/J`,
/// written atomically, and a persistent znode `<zk_path>/J` whose data is that file's path
/// (Flink: a RetrievableStateHandle in the storage directory, its pointer in ZooKeeper).
///
/// A node's path is used only if it lies under `storage_dir` (storage_pointer.hpp): recover()
/// refuses any other (rejected, naming it) and remove() removes the node but leaves the file.
///
/// put() writes the file before the node, so a node never points to a missing file unless the
/// file was removed behind the store's back; remove() deletes the node before the file, so a
/// crash in between leaves at worst an orphaned file, never a dangling pointer.
class zookeeper_job_graph_store final : public job_graph_store {
public:
  /// `zk_path`: e.g. "/flink/<cluster>/jobgraphs". `storage_dir` is made absolute (the znodes
  /// hold absolute paths). `log` (may be null) gets warnings about nodes that are not job ids.
  zookeeper_job_graph_store(std::shared_ptr<zookeeper_client> client, std::string zk_path,
                            std::filesystem::path storage_dir,
                            std::shared_ptr<spdlog::logger> log = nullptr);

  expected<unit> put(const graph::job_graph& graph) override;
  expected<graph::job_graph> recover(const graph::job_id& job) override;
  expected<std::vector<graph::job_id>> job_ids() override;
  expected<unit> remove(const graph::job_id& job) override;

  /// `<storage_dir>/job_graphs/<job-id>`.
  std::filesystem::path file_of(const graph::job_id& job) const;
  /// `<zk_path>/<job-id>`.
  std::string node_of(const graph::job_id& job) const;

private:
  std::shared_ptr<zookeeper_client> client_;
  std::string zk_path_;
  std::filesystem::path storage_dir_;
  std::shared_ptr<spdlog::logger> log_;
  /// Serialises this process's writers of one store (the files' temporary names are unique
  /// anyway; this keeps put/remove of the same job from interleaving node and file steps).
  std::mutex mutex_;
};

} // namespace flint::ha
