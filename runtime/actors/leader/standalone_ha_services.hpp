#pragma once
/// Flink's StandaloneHaServices: a cluster without ZooKeeper. Every leader is fixed by
/// configuration — the ResourceManager, the Dispatcher and the JobMasters live in the JobManager
/// process at `jobmanager.rpc.address:jobmanager.rpc.port` — and leads under the fixed
/// `standalone_leader_id()`.
///
/// - Elections grant `standalone_leader_id()` at once; a confirmation publishes the leader's
///   address to retrievals in the same process (the JobMaster follows the local RM this way).
/// - Retrievals come in two kinds, chosen at construction:
///   * local (the JobManager process): they follow the confirmations of local elections;
///   * remote (a TaskManager process): the leader's endpoint id ("resource_manager",
///     "dispatcher", "job_master/<job>") is resolved at host:port and followed by a
///     resolving_leader_retrieval, as Flink's TaskExecutor resolves its fixed Akka address.
///
/// Listeners are called on the resolving thread (or the confirming one): endpoints forward into
/// their main thread, as with every leader service. `stop()` joins the thread, so no callback
/// runs after it returns; the actor system must outlive every retrieval.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <caf/fwd.hpp>

#include "runtime/actors/leader/ha_services.hpp"

namespace flint::leader {

struct standalone_ha_config {
  /// Where the leaders live (`jobmanager.rpc.address`, `jobmanager.rpc.port`).
  std::string jobmanager_host = "localhost";
  std::uint16_t jobmanager_port = 6123;
  /// Pause between two resolution attempts.
  std::chrono::milliseconds retry_interval{500};
  /// Bound on one attempt's lookup once connected.
  std::chrono::milliseconds lookup_timeout{2000};
};

class standalone_ha_services : public ha_services {
public:
  /// The JobManager process: every leader is local.
  standalone_ha_services();
  /// A TaskManager process: leaders are resolved at `config`'s host:port through `sys`'s
  /// middleman (loaded by `rpc::configure_node`).
  standalone_ha_services(caf::actor_system& sys, standalone_ha_config config);
  ~standalone_ha_services() override;
  standalone_ha_services(const standalone_ha_services&) = delete;
  standalone_ha_services& operator=(const standalone_ha_services&) = delete;

  std::unique_ptr<leader_election_service> resource_manager_election() override;
  std::unique_ptr<leader_retrieval_service> resource_manager_retrieval() override;
  std::unique_ptr<leader_election_service> dispatcher_election() override;
  std::unique_ptr<leader_retrieval_service> dispatcher_retrieval() override;
  std::unique_ptr<leader_election_service> job_master_election(const graph::job_id& job) override;
  std::unique_ptr<leader_retrieval_service> job_master_retrieval(const graph::job_id& job) override;

  /// Whether retrievals resolve remote leaders (TaskManager process).
  bool remote() const noexcept { return sys_ != nullptr; }

  /// The leader slot of one endpoint id in this process (elections and local retrievals).
  struct slot;

private:
  std::unique_ptr<leader_election_service> election(const std::string& endpoint_id);
  std::unique_ptr<leader_retrieval_service> retrieval(const std::string& endpoint_id);
  std::shared_ptr<slot> slot_of(const std::string& endpoint_id);

  caf::actor_system* sys_ = nullptr;
  standalone_ha_config config_;
  std::mutex mtx_;
  std::map<std::string, std::shared_ptr<slot>> slots_;
};

} // namespace flint::leader
