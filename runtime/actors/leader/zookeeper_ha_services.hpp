#pragma once
/// Flink's ZooKeeperLeaderElectionHaServices (the leader part): every component elects and
/// retrieves its leader through ZooKeeper under `<root>/<cluster-id>/leader/<component>`, with
/// the components `resource_manager`, `dispatcher` and `job-<job id>`. All services share one
/// client (one session), which must stay open while any of them runs.

#include <chrono>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/leader/resolving_leader_retrieval.hpp"

namespace flint::ha {
class zookeeper_client;
} // namespace flint::ha

namespace flint::leader {

struct zookeeper_ha_config {
  /// `high-availability.zookeeper.path.root`.
  std::string root = "/flink";
  /// `high-availability.cluster-id`.
  std::string cluster_id = "default";
  /// How long a suspended (connecting) session keeps its leadership.
  std::chrono::milliseconds suspended_grace{10000};
  /// Where this process's leaders are reached (`jobmanager.rpc.address` and the bound port):
  /// written into the connection info of confirmations that carry no host of their own.
  std::string advertised_host;
  std::uint16_t advertised_port = 0;
  /// Set: retrievals hand out callable handles (resolving_leader_retrieval, with `resolving`);
  /// null: they report endpoint id, host and port only.
  caf::actor_system* system = nullptr;
  resolving_retrieval_config resolving;
};

class zookeeper_ha_services : public ha_services {
public:
  zookeeper_ha_services(std::shared_ptr<ha::zookeeper_client> client, zookeeper_ha_config config,
                        std::shared_ptr<spdlog::logger> logger);

  std::unique_ptr<leader_election_service> resource_manager_election() override;
  std::unique_ptr<leader_retrieval_service> resource_manager_retrieval() override;
  std::unique_ptr<leader_election_service> dispatcher_election() override;
  std::unique_ptr<leader_retrieval_service> dispatcher_retrieval() override;
  std::unique_ptr<leader_election_service> job_master_election(const graph::job_id& job) override;
  std::unique_ptr<leader_retrieval_service> job_master_retrieval(const graph::job_id& job) override;

  /// `<root>/<cluster-id>/leader/<component>`.
  std::string component_path(const std::string& component) const;

private:
  std::unique_ptr<leader_election_service> election(const std::string& component);
  std::unique_ptr<leader_retrieval_service> retrieval(const std::string& component);

  std::shared_ptr<ha::zookeeper_client> client_;
  zookeeper_ha_config config_;
  std::shared_ptr<spdlog::logger> log_;
};

} // namespace flint::leader
