#pragma once
/// The HA stores of a cluster, made from one configuration: what the Dispatcher (job graphs, job
/// results) and each JobMaster (its checkpoint id counter and completed checkpoints) use. Flink
/// spreads these over HighAvailabilityServices and CheckpointRecoveryFactory; here they are one
/// factory so the two versions (standalone, ZooKeeper) are chosen in one place.

#include <filesystem>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "runtime/graph/ids.hpp"
#include "runtime/ha/checkpoint_id_counter.hpp"
#include "runtime/ha/completed_checkpoint_store.hpp"
#include "runtime/ha/job_graph_store.hpp"
#include "runtime/ha/job_result_store.hpp"

namespace flint::ha {

class zookeeper_client;

struct ha_store_paths {
  /// `high-availability.zookeeper.path.root` (normalised by cluster_path()).
  std::string root = "/flink";
  /// `high-availability.cluster-id`.
  std::string cluster_id = "default";
  /// `high-availability.storageDir`: the job graphs' and job results' files.
  std::filesystem::path storage_dir;
};

/// Owns nothing it is not given; thread-safe. The job graph and job result stores live as long
/// as this object; the per-job stores are the caller's.
class ha_stores {
public:
  virtual ~ha_stores() = default;
  virtual job_graph_store& job_graphs() = 0;
  virtual job_result_store& job_results() = 0;
  /// A new counter for `job` (standalone: a fresh one starting at 1; ZooKeeper: on the job's
  /// node, continuing where an earlier leader stopped).
  virtual std::unique_ptr<ha::checkpoint_id_counter> checkpoint_id_counter(
    const graph::job_id& job) = 0;
  /// A new store for `job` (standalone: empty; ZooKeeper: the job's recorded checkpoints).
  virtual std::unique_ptr<completed_checkpoint_store> completed_checkpoints(
    const graph::job_id& job) = 0;
};

/// In memory: nothing survives the process (a non-HA cluster).
std::unique_ptr<ha_stores> make_standalone_ha_stores();

/// ZooKeeper pointers and files, with `client` (connected; shared with the leader services).
/// A path read back from ZooKeeper is used only if it names a file of the store's own under
/// `<storageDir>/<cluster-id>` (storage_pointer.hpp).
///   ZooKeeper: <root>/<cluster-id>/jobgraphs/<job>
///              <root>/<cluster-id>/jobs/<job>/checkpoints/<id, 19 digits>
///              <root>/<cluster-id>/jobs/<job>/checkpoint_id_counter
///   files:     <storageDir>/<cluster-id>/job_graphs/<job>
///              <storageDir>/<cluster-id>/completed_checkpoints/<job>/<id, 19 digits>
///                (each holds the path of the checkpoint's chk-N/_metadata)
///              <storageDir>/job-result-store/<cluster-id>/<job>[_DIRTY].json
std::unique_ptr<ha_stores> make_zookeeper_ha_stores(std::shared_ptr<zookeeper_client> client,
                                                    ha_store_paths paths,
                                                    std::shared_ptr<spdlog::logger> log);

} // namespace flint::ha
