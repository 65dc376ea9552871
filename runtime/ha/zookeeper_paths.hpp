#pragma once
/// Where a Flint cluster keeps its state in ZooKeeper: the one place that turns
/// `high-availability.zookeeper.path.root` and `high-availability.cluster-id` into node paths, so
/// the leader services and the HA stores can never disagree about the layout.
///
///   <root>/<cluster-id>/leader/<component>                 leader election (runtime/actors/leader)
///   <root>/<cluster-id>/jobgraphs/<job-id>                 JobGraphStore pointers
///   <root>/<cluster-id>/jobs/<job-id>/checkpoints/<id>     CompletedCheckpointStore pointers
///   <root>/<cluster-id>/jobs/<job-id>/checkpoint_id_counter
///   <root>/<cluster-id>/rest_endpoints/<host>:<port>       a JobManager's REST URL, by its RPC
///                                                          address (ephemeral)
///
/// Header-only on purpose: flint_leader_zookeeper uses it without linking the stores.

#include <cstdint>
#include <string>

#include "runtime/graph/ids.hpp"

namespace flint::ha {

/// `<root>/<cluster-id>` with the root normalised as Flink's ZooKeeperUtils does: trailing '/'
/// stripped and a leading '/' ensured, so "flink", "/flink/" and "/flink" all mean "/flink" and
/// "" or "/" mean the top of the namespace.
inline std::string cluster_path(std::string root, const std::string& cluster_id) {
  while (!root.empty() && root.back() == '/')
    root.pop_back();
  if (!root.empty() && root.front() != '/')
    root.insert(root.begin(), '/');
  return root + "/" + cluster_id;
}

/// `<cluster>/jobgraphs`: one child per submitted, not yet globally terminated job.
inline std::string job_graphs_path(const std::string& cluster) {
  return cluster + "/jobgraphs";
}

/// `<cluster>/jobs/<job-id>`: the parent of one job's checkpoint nodes.
inline std::string job_path(const std::string& cluster, const graph::job_id& job) {
  return cluster + "/jobs/" + job.to_string();
}

/// `<cluster>/rest_endpoints/<host>:<port>`: the REST URL of the JobManager whose RPC service is
/// at host:port, which it writes (ephemeral) once its REST endpoint listens. A standby finds the
/// leader's REST endpoint here from the RPC address the leader publishes (Flink publishes its
/// REST leader as a component of its own; a node of its own here leaves the leaders' connection
/// information as every reader knows it).
inline std::string rest_endpoint_path(const std::string& cluster, const std::string& rpc_host,
                                      std::uint16_t rpc_port) {
  return cluster + "/rest_endpoints/" + rpc_host + ":" + std::to_string(rpc_port);
}

/// The last '/'-separated part removed ("/a/b" -> "/a"; "/a" -> "").
inline std::string parent_path(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash);
}

} // namespace flint::ha
