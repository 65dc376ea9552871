#pragma once
/// The TaskExecutor's bookkeeping without actors (Flink's TaskExecutor minus its RPC): its slots
/// (TaskSlotTable) and the jobs it serves (JobTable), the tasks deployed here, the connection to
/// the ResourceManager (leader followed, registration attempt, registration id), the time-outs of
/// slots not accepted by a JobMaster, and the decisions on them — whether a call may reserve a
/// slot, deploy a task, free a slot, and when a job may leave this TaskExecutor.
///
/// Plain C++: no scheduling, no sends. The actor (task_executor.cpp) does the messaging, the
/// timers and the heartbeats and asks this class what to do; it runs on the actor's main thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/leader/leader_services.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"
#include "runtime/common/expected.hpp"

namespace flint::task_executor {

/// A task deployed here, until it reaches a final state.
struct task_record {
  caf::actor handle;
  std::string name;
  graph::job_id job;
  cluster::allocation_id allocation;
  graph::execution_state state = graph::execution_state::created;
  /// Raised before a cancel or fail mail, so a long step stops between two records.
  std::shared_ptr<std::atomic<bool>> interrupt;
  /// Its JobMaster connection closed while it ran (it is being failed): until it ended, and its
  /// partitions with it, no JobMaster gets this job's slots offered again.
  bool orphaned = false;
};

/// An established registration at the ResourceManager.
struct resource_manager_connection {
  /// The registration id the RM gave (Flink's InstanceID).
  cluster::instance_id registration_id;
  cluster::resource_id resource_manager_resource_id;
  /// Fenced with the ResourceManagerId registered with.
  rpc::gateway gateway;
};

/// A slot that became free (it was freed, or its last task left a releasing slot).
struct freed_slot {
  graph::job_id job;
  std::int32_t index = 0;
  cluster::allocation_id allocation;
};

/// What a JobMaster leader's registration success means for the job's connection.
enum class job_manager_connection_change {
  /// The job holds no slots here any more: nothing to connect.
  unknown_job,
  /// Already connected to this leader.
  unchanged,
  /// Not connected: connect.
  connect,
  /// Connected to an earlier leader: close that connection, then connect.
  replace,
};

class task_executor_state {
public:
  /// `number_of_slots` slots of `default_slot_profile` owned by `resource_id`.
  /// `holds_partitions` says whether the shuffle keeps partitions of a job here (null: never).
  task_executor_state(cluster::resource_id resource_id, std::int32_t number_of_slots,
                      cluster::resource_profile default_slot_profile,
                      std::function<bool(const graph::job_id&)> holds_partitions = nullptr);

  const cluster::resource_id& resource_id() const noexcept { return slots_.owner(); }
  task_slot_table& slots() noexcept { return slots_; }
  const task_slot_table& slots() const noexcept { return slots_; }
  job_table& jobs() noexcept { return jobs_; }
  const job_table& jobs() const noexcept { return jobs_; }

  /// The token a call of fencing scope `scope` must carry: the ResourceManagerId registered with
  /// for `rm_scope`, the job's JobMasterId while connected for a job id; nil otherwise.
  rpc::fencing_token expected_token(const std::string& scope) const;

  // -- resource manager -------------------------------------------------------------------------

  /// Whether `address`/`id` is the (non-nil) leader followed already.
  bool is_current_resource_manager_leader(const leader::leader_address& address,
                                          const rpc::fencing_token& id) const;
  /// Follows a new ResourceManager leader (nil or empty: none).
  void set_resource_manager_leader(leader::leader_address address, rpc::fencing_token id);
  /// A leader to register at is known.
  bool has_resource_manager_leader() const;
  const leader::leader_address& resource_manager_address() const noexcept { return rm_address_; }
  const rpc::fencing_token& resource_manager_leader_id() const noexcept { return rm_id_; }

  /// A new registration attempt starts; returns its epoch. Answers of older epochs are stale.
  std::uint64_t begin_resource_manager_registration() noexcept { return ++rm_epoch_; }
  bool is_current_resource_manager_epoch(std::uint64_t epoch) const noexcept {
    return epoch == rm_epoch_;
  }
  /// The registration of `epoch` succeeded. False (nothing recorded) for a stale epoch.
  bool resource_manager_registered(std::uint64_t epoch, resource_manager_connection connection);
  /// Ends the connection and any attempt (the epoch moves on). Returns the connection if it was
  /// established: the RM must be told and its heartbeat no longer watched.
  std::optional<resource_manager_connection> close_resource_manager_connection();
  bool is_connected_to_resource_manager() const noexcept { return rm_connection_.has_value(); }
  /// The established connection, or null.
  const resource_manager_connection* resource_manager() const noexcept {
    return rm_connection_ ? &*rm_connection_ : nullptr;
  }
  /// The ResourceManagerId registered with; nil when not connected.
  cluster::resource_manager_id resource_manager_id() const;

  // -- slots ------------------------------------------------------------------------------------

  struct slot_reserved {
    /// The slot waits for its JobMaster to accept it: its time-out must run.
    bool awaits_acceptance = false;
    /// The job is connected to its JobMaster already: the slot can be offered now.
    bool job_manager_connected = false;
  };
  /// Flink's requestSlot: refused (fencing_token_mismatch) unless registered at the RM under the
  /// request's ResourceManagerId, refused (invalid_argument) for a slot of another TaskExecutor
  /// or by the slot table; else the slot is reserved for the job, which gets a JobTable entry.
  expected<slot_reserved> request_slot(const request_slot_request& req);

  /// Whether the JobMaster of `job` may free the slot of `allocation`: not_found for an unknown
  /// allocation, rejected for another job's slot.
  expected<unit> check_free_slot(const graph::job_id& job,
                                 const cluster::allocation_id& allocation) const;

  /// Frees the slot of `allocation`. The slot when it is free now; nothing when it is unknown or
  /// still holds tasks (releasing until they are gone).
  std::optional<freed_slot> free_slot(const cluster::allocation_id& allocation);

  /// ACTIVE → ALLOCATED; true when it changed (its time-out must run again).
  bool mark_slot_inactive(const cluster::allocation_id& allocation);

  /// The JobMaster's answer to an offer of `offers` for `job`: the accepted slots become active,
  /// the others are returned, to be freed. Slots freed or given to another job meanwhile are
  /// skipped.
  std::vector<cluster::slot_offer> accept_offers(const graph::job_id& job,
                                                 const std::vector<cluster::slot_offer>& offers,
                                                 const std::vector<cluster::slot_offer>& accepted);

  /// Arms the time-out of an allocated slot; returns the ticket its timer must bring back.
  std::uint64_t arm_slot_timeout(const cluster::allocation_id& allocation);
  /// The timer of `ticket` fired: true (and disarmed) if it is still the slot's current one.
  bool slot_timeout_elapsed(const cluster::allocation_id& allocation, std::uint64_t ticket);
  void disarm_slot_timeout(const cluster::allocation_id& allocation) {
    slot_timeouts_.erase(allocation);
  }
  bool has_slot_timeout(const cluster::allocation_id& allocation) const {
    return slot_timeouts_.count(allocation) != 0;
  }

  // -- tasks ------------------------------------------------------------------------------------

  /// Flink's submitTask checks: the job must be connected (illegal_state) under the request's
  /// JobMasterId (fencing_token_mismatch), the slot allocated to the job (not_found; it becomes
  /// active); then the attempt is registered in the slot (rejected if it is already).
  expected<unit> accept_task(const graph::job_id& job, const cluster::job_master_id& job_master_id,
                             const cluster::allocation_id& allocation,
                             const graph::execution_attempt_id& attempt);
  /// Records the task actor of an accepted attempt.
  void add_task(const graph::execution_attempt_id& attempt, task_record record);
  /// The task of `attempt` if it runs for `job`; not_found otherwise.
  expected<const task_record*> task_of_job(const graph::job_id& job,
                                           const graph::execution_attempt_id& attempt) const;
  const task_record* task(const graph::execution_attempt_id& attempt) const;
  /// The tasks running in the slot of `allocation`.
  std::vector<const task_record*> tasks_of(const cluster::allocation_id& allocation) const;
  /// A task reports `to`: returns the state it was in, or nothing for an unknown attempt.
  std::optional<graph::execution_state> switch_task_state(
    const graph::execution_attempt_id& attempt, graph::execution_state to);
  /// Forgets a task that reached a final state; returns its slot if that became free.
  std::optional<freed_slot> remove_task(const graph::execution_attempt_id& attempt);
  /// Marks every task of `job` orphaned (see task_record::orphaned).
  void orphan_tasks_of(const graph::job_id& job);
  /// Whether a task of `job` is still orphaned.
  bool has_orphaned_tasks(const graph::job_id& job) const;
  const std::map<graph::execution_attempt_id, task_record>& tasks() const noexcept {
    return tasks_;
  }
  void clear_tasks() { tasks_.clear(); }

  // -- jobs and their JobMaster connections -----------------------------------------------------

  /// What a registration at `job`'s JobMaster leader `id` changes.
  job_manager_connection_change job_manager_gained_leadership(
    const graph::job_id& job, const cluster::job_master_id& id) const;
  /// Whether `id` is the leader `job` is connected to (an answer of an older connection is not).
  bool is_connected_to(const graph::job_id& job, const cluster::job_master_id& id) const;
  /// The connections to JobMasters, for the goodbye at shutdown.
  std::vector<job_master_connection> job_manager_connections() const;
  /// Whether the shuffle keeps blocking partitions of `job` here.
  bool holds_partitions_of(const graph::job_id& job) const;
  /// Flink's closeJobManagerConnectionIfNoAllocatedResources test: a slot or a partition of the
  /// job keeps it here.
  bool has_allocated_resources(const graph::job_id& job) const;
  /// Drops the job's JobTable entry when none of its slots is left; true if it did.
  bool remove_job_if_no_slots(const graph::job_id& job);

  /// Drops every peer handle (JobMaster connections, the RM's gateway and address), at shutdown.
  void drop_peers();

private:
  task_slot_table slots_;
  job_table jobs_;
  std::function<bool(const graph::job_id&)> holds_partitions_;

  leader::leader_address rm_address_;
  rpc::fencing_token rm_id_;
  std::optional<resource_manager_connection> rm_connection_;
  std::uint64_t rm_epoch_ = 0;

  std::map<graph::execution_attempt_id, task_record> tasks_;

  /// Allocations whose slot times out unless it becomes active; the ticket tells a timer of an
  /// earlier arming apart.
  std::map<cluster::allocation_id, std::uint64_t> slot_timeouts_;
  std::uint64_t next_slot_ticket_ = 0;
};

} // namespace flint::task_executor
