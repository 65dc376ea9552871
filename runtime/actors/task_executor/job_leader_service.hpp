#pragma once
/// Follows the JobMaster leader of every job that holds slots on this TaskExecutor and registers
/// there (Flink's DefaultJobLeaderService): per job a leader retrieval from the HA services;
/// when a leader appears, a retrying registration (`register_task_manager`, fenced with the
/// leader's JobMasterId); on success the listener establishes the connection and offers slots.
/// Lives in its owner endpoint's main thread; retrieval callbacks from other threads are
/// forwarded there with `run_async`.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/registration/retrying_registration.hpp"

namespace flint::task_executor {

/// What the job leader service reports (Flink's JobLeaderListener), in the owner's main thread.
class job_leader_listener {
public:
  virtual ~job_leader_listener() = default;
  /// Registered at `job`'s leader `address` under `job_master_id`.
  virtual void job_manager_gained_leadership(
    const graph::job_id& job, const cluster::job_master_id& job_master_id,
    const leader::leader_address& address,
    const job_master::task_manager_registration_success& success) = 0;
  /// The leader we were registered at (or registering with) is no longer the leader.
  virtual void job_manager_lost_leadership(const graph::job_id& job,
                                           const cluster::job_master_id& job_master_id) = 0;
};

class job_leader_service {
public:
  /// Finds a handle for a leader published without one (a remote leader, by endpoint id).
  using lookup_fn = std::function<std::optional<caf::actor>(const std::string& endpoint_id)>;

  /// `owner`, `ha` and `listener` must outlive the service. `registration` is what the TE
  /// sends to each JobMaster.
  job_leader_service(rpc::rpc_endpoint& owner, leader::ha_services& ha,
                     registration::retrying_registration_config config,
                     job_master::register_task_manager_request registration,
                     job_leader_listener& listener, lookup_fn lookup = {});
  ~job_leader_service();

  job_leader_service(const job_leader_service&) = delete;
  job_leader_service& operator=(const job_leader_service&) = delete;

  /// Starts following `job`'s leader ("Add job … for job leader monitoring."); no-op if known.
  void add_job(const graph::job_id& job);
  /// Stops following `job`; an ongoing registration is cancelled.
  void remove_job(const graph::job_id& job);
  /// Registers again at `job`'s current leader (after a lost connection).
  void reconnect(const graph::job_id& job);
  bool contains_job(const graph::job_id& job) const;
  /// The leader id last retrieved for `job` (nil when none).
  cluster::job_master_id leader_id_of(const graph::job_id& job) const;
  /// Stops following every job.
  void stop();

private:
  struct job_state;
  void on_leader(const std::shared_ptr<job_state>& s, const leader::leader_address& address,
                 const cluster::job_master_id& id);
  void start_registration(const std::shared_ptr<job_state>& s);

  rpc::rpc_endpoint& owner_;
  leader::ha_services& ha_;
  registration::retrying_registration_config config_;
  job_master::register_task_manager_request registration_;
  job_leader_listener& listener_;
  lookup_fn lookup_;
  std::map<graph::job_id, std::shared_ptr<job_state>> jobs_;
};

} // namespace flint::task_executor
