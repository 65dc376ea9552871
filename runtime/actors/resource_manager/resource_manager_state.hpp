#pragma once
/// The ResourceManager's bookkeeping without actors (Flink's ResourceManager minus its RPC): the
/// leadership epoch and its SlotManager, the registered TaskExecutors under their registration
/// ids (Flink's InstanceID), the registered JobMasters per job, and the decisions on them —
/// which registration a call must match, what a new registration replaces, which JobMasters
/// learn of a lost TaskExecutor.
///
/// Plain C++: no scheduling, no sends. The actor (resource_manager.cpp) does the messaging, the
/// heartbeats and the leader election and asks this class what to do; it runs on the actor's
/// main thread.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/common/expected.hpp"

namespace flint::resource_manager {

/// A registered TaskExecutor.
struct task_executor_registration {
  cluster::resource_id id;
  /// Its registration id here: calls about this registration must carry it.
  cluster::instance_id instance;
  std::string address;
  caf::actor handle;
  std::uint16_t data_port = 0;
  /// Whether its first slot report reached the SlotManager.
  bool reported = false;
};

/// A registered JobMaster.
struct job_manager_registration {
  graph::job_id job;
  cluster::job_master_id job_master_id;
  cluster::resource_id resource_id;
  std::string address;
  caf::actor handle;
};

class resource_manager_state {
public:
  /// `seed` draws the registration ids; give each ResourceManager run a different one, so a
  /// restarted one never hands out its predecessor's ids.
  explicit resource_manager_state(std::uint64_t seed);

  // -- leadership -------------------------------------------------------------------------------

  /// Leadership granted: a fresh SlotManager (on `executor`, asking `actions`; both must outlive
  /// it). Returns the new epoch.
  std::uint64_t start_leading(const slot_manager_config& config,
                              heartbeat::main_thread_executor& executor,
                              slot_manager_actions& actions);
  /// Leadership lost (or the actor stops): the SlotManager and every registration are forgotten,
  /// answers of the ending epoch become stale.
  void stop_leading();
  bool is_leading() const noexcept { return slots_.has_value(); }
  std::uint64_t epoch() const noexcept { return epoch_; }
  /// Whether an answer of `epoch` still counts: the same leadership, still leading.
  bool is_current_epoch(std::uint64_t epoch) const noexcept {
    return epoch == epoch_ && is_leading();
  }
  /// The SlotManager; null while not leading.
  slot_manager* slots() noexcept { return slots_ ? &*slots_ : nullptr; }
  const slot_manager* slots() const noexcept { return slots_ ? &*slots_ : nullptr; }

  // -- task executors ---------------------------------------------------------------------------

  struct task_executor_registered {
    cluster::instance_id instance;
    /// An earlier registration of the same resource id was replaced (its slots are gone until
    /// the new slot report brings them back; the TaskExecutor itself is not told).
    bool replaced = false;
  };
  /// Registers a TaskExecutor under a new registration id. Only while leading.
  task_executor_registered register_task_executor(const task_executor_registration_request& req,
                                                  caf::actor handle);

  /// A slot report of a registration (send_slot_report): the first registers the slots at the
  /// SlotManager, later ones update them. not_found for an unknown TaskExecutor or a stale
  /// registration id.
  expected<unit> report_slots(const cluster::resource_id& id,
                              const cluster::instance_id& registration,
                              const cluster::slot_report& report);
  /// A slot report carried by a heartbeat; ignored for an unknown TaskExecutor.
  void heartbeat_slot_report(const cluster::resource_id& id, const cluster::slot_report& report);

  /// A TaskExecutor freed `slot` of `allocation`: not_found unless `registration` is the current
  /// registration of the slot's owner.
  expected<unit> notify_slot_available(const cluster::instance_id& registration,
                                       const cluster::slot_id& slot,
                                       const cluster::allocation_id& allocation);

  struct closed_task_executor {
    task_executor_registration registration;
    /// The JobMasters whose slots were there: each must learn that the TaskExecutor is gone.
    std::vector<job_manager_registration> job_managers;
  };
  /// Forgets a TaskExecutor and its slots (requests assigned there are retried elsewhere).
  /// Nothing for an unknown one.
  std::optional<closed_task_executor> close_task_manager_connection(const cluster::resource_id& id);

  const task_executor_registration* task_executor(const cluster::resource_id& id) const;
  const task_executor_registration* task_executor_by_instance(
    const cluster::instance_id& instance) const;
  /// The TaskExecutor whose actor is `handle`, if registered.
  std::optional<cluster::resource_id> task_executor_of(const caf::actor_addr& handle) const;
  /// Where the SlotManager's allocation for `instance` goes: the TaskExecutor `task_manager`, if
  /// it is still registered under that registration id.
  const task_executor_registration* allocation_target(
    const cluster::instance_id& instance, const cluster::resource_id& task_manager) const;
  std::size_t number_of_task_executors() const noexcept { return task_executors_.size(); }

  // -- job managers -----------------------------------------------------------------------------

  struct job_manager_registered {
    /// The registration of the job it replaced, if any.
    std::optional<job_manager_registration> previous;
    /// `previous` was another leader (another JobMasterId): its connection is closed (its
    /// pending slot requests dropped) and it must be told.
    bool previous_closed = false;
  };
  /// Registers the JobMaster of a job. Only while leading.
  job_manager_registered register_job_manager(job_manager_registration registration);

  /// Whether a JobMaster may request slots for `job`: not_found if none is registered for it,
  /// rejected if the registered one has another JobMasterId.
  expected<unit> check_slot_request(const graph::job_id& job,
                                    const cluster::job_master_id& id) const;
  /// Hands a slot request to the SlotManager; false for a duplicate (ignored).
  bool register_slot_request(const slot_request& request);
  /// Withdraws a pending slot request; false if it is not pending (or not leading).
  bool cancel_slot_request(const cluster::allocation_id& allocation);

  /// Forgets the JobMaster of `job` and drops its pending slot requests. Nothing if unknown.
  std::optional<job_manager_registration> close_job_manager_connection(const graph::job_id& job);

  const job_manager_registration* job_manager(const graph::job_id& job) const;
  const job_manager_registration* job_manager_by_resource(const cluster::resource_id& id) const;

  // -- slots and idle workers -------------------------------------------------------------------

  /// A TaskExecutor's answer to an allocation (see slot_manager::complete_allocation). Call only
  /// for the current epoch.
  void complete_allocation(const cluster::allocation_id& allocation, const cluster::slot_id& slot,
                           const expected<unit>& result);
  resource_overview overview() const;
  /// An idle TaskExecutor could not be released (a standalone RM cannot stop workers).
  void count_idle_release() noexcept { ++idle_releases_; }
  std::size_t idle_releases() const noexcept { return idle_releases_; }

private:
  void apply_slot_report(task_executor_registration& reg, const cluster::slot_report& report);

  std::mt19937_64 rng_;
  std::uint64_t epoch_ = 0;
  std::optional<slot_manager> slots_;
  std::map<cluster::resource_id, task_executor_registration> task_executors_;
  std::map<cluster::instance_id, cluster::resource_id> by_instance_;
  std::map<graph::job_id, job_manager_registration> job_managers_;
  std::size_t idle_releases_ = 0;
};

} // namespace flint::resource_manager
