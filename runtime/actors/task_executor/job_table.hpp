#pragma once
/// The jobs a TaskExecutor serves (Flink's JobTable): one entry per job that holds slots here,
/// and, once the TaskExecutor registered at the job's JobMaster leader, the connection to it —
/// the JobMasterId that fences calls about the job, and a gateway carrying it. Plain C++, used
/// from the TaskExecutor's main thread only.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/rpc/gateway.hpp"

namespace flint::task_executor {

/// An established connection to a job's JobMaster leader.
struct job_master_connection {
  cluster::job_master_id job_master_id;
  cluster::resource_id job_master_resource_id;
  /// Fenced with `job_master_id`.
  rpc::gateway gateway;
};

struct job_entry {
  graph::job_id job;
  /// The JobMaster's endpoint id as the ResourceManager named it.
  std::string target_address;
  std::optional<job_master_connection> connection;
};

class job_table {
public:
  /// The entry of `job`, created if missing (the bool says whether it was).
  std::pair<job_entry*, bool> get_or_create(const graph::job_id& job,
                                            const std::string& target_address);
  job_entry* get(const graph::job_id& job);
  const job_entry* get(const graph::job_id& job) const;
  bool remove(const graph::job_id& job);

  /// Marks `job` connected; false if the job has no entry.
  bool connect(const graph::job_id& job, job_master_connection connection);
  /// Drops the connection of `job`, returning it.
  std::optional<job_master_connection> disconnect(const graph::job_id& job);

  /// The JobMasterId that fences calls about `job`: set only while connected.
  std::optional<cluster::job_master_id> job_master_id_of(const graph::job_id& job) const;
  /// The job whose JobMaster has this resource id, if connected.
  std::optional<graph::job_id> job_of_job_master(const cluster::resource_id& job_master) const;

  std::vector<graph::job_id> jobs() const;
  std::size_t size() const noexcept { return jobs_.size(); }

private:
  std::map<graph::job_id, job_entry> jobs_;
};

} // namespace flint::task_executor
