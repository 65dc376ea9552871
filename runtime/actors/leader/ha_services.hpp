#pragma once
/// High-availability services (Flink's HighAvailabilityServices): where each component finds
/// the election it contends in and the retrieval that tells it who leads. The MiniCluster uses
/// the embedded kind; standalone clusters a fixed address; ZooKeeper later, behind the same
/// interface. Thread-safe.

#include <map>
#include <memory>
#include <mutex>
#include <random>

#include "runtime/actors/leader/embedded_leader_service.hpp"
#include "runtime/graph/ids.hpp"

namespace flint::leader {

class ha_services {
public:
  virtual ~ha_services() = default;

  virtual std::unique_ptr<leader_election_service> resource_manager_election() = 0;
  virtual std::unique_ptr<leader_retrieval_service> resource_manager_retrieval() = 0;
  virtual std::unique_ptr<leader_election_service> dispatcher_election() = 0;
  virtual std::unique_ptr<leader_retrieval_service> dispatcher_retrieval() = 0;
  /// The election of `job`'s JobMaster (its runner contends).
  virtual std::unique_ptr<leader_election_service> job_master_election(
    const graph::job_id& job) = 0;
  /// Who leads `job` (TaskExecutors' job leader service follows it).
  virtual std::unique_ptr<leader_retrieval_service> job_master_retrieval(
    const graph::job_id& job) = 0;
};

/// Everything in one process (Flink's EmbeddedHaServices).
class embedded_ha_services : public ha_services {
public:
  explicit embedded_ha_services(std::uint64_t seed) : rng_(seed) {}

  std::unique_ptr<leader_election_service> resource_manager_election() override {
    return resource_manager_.create_election_service();
  }
  std::unique_ptr<leader_retrieval_service> resource_manager_retrieval() override {
    return resource_manager_.create_retrieval_service();
  }
  std::unique_ptr<leader_election_service> dispatcher_election() override {
    return dispatcher_.create_election_service();
  }
  std::unique_ptr<leader_retrieval_service> dispatcher_retrieval() override {
    return dispatcher_.create_retrieval_service();
  }
  std::unique_ptr<leader_election_service> job_master_election(const graph::job_id& job) override {
    return job_service(job).create_election_service();
  }
  std::unique_ptr<leader_retrieval_service> job_master_retrieval(
    const graph::job_id& job) override {
    return job_service(job).create_retrieval_service();
  }

  /// The leadership of one component, to revoke in tests and drills.
  embedded_leader_service& resource_manager_leadership() { return resource_manager_; }
  embedded_leader_service& dispatcher_leadership() { return dispatcher_; }
  embedded_leader_service& job_master_leadership(const graph::job_id& job) {
    return job_service(job);
  }

private:
  embedded_leader_service& job_service(const graph::job_id& job) {
    std::lock_guard<std::mutex> guard(mtx_);
    auto& slot = jobs_[job];
    if (!slot)
      slot = std::make_unique<embedded_leader_service>(rng_());
    return *slot;
  }

  std::mutex mtx_;
  std::mt19937_64 rng_;
  embedded_leader_service resource_manager_{rng_()};
  embedded_leader_service dispatcher_{rng_()};
  std::map<graph::job_id, std::unique_ptr<embedded_leader_service>> jobs_;
};

} // namespace flint::leader
