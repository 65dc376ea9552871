#pragma once
/// The JobMaster endpoint (Flink's JobMaster): runs one job under one JobMasterId. Methods per
/// job_master_gateway.hpp.
///
/// Start order (000_…txt, startJobExecution): the fencing token is set; the services start —
/// heartbeats towards TaskExecutors (we request with `task_executor::heartbeat_from_job_manager`,
/// they answer with `heartbeat_from_task_manager`) and from the ResourceManager (it requests with
/// `heartbeat_from_resource_manager`, we answer with `resource_manager::heartbeat_from_job_manager`),
/// the SlotPool (its own fenced actor "slot_pool/<job id>", same token, linked to this one and put
/// into the directory), ResourceManager leader retrieval and registration (retrying,
/// `register_job_manager` fenced with the retrieved ResourceManagerId; on success the SlotPool gets
/// `connect_to_resource_manager`); then the scheduler is reset and started. It can allocate at
/// once: the SlotPool parks requests until a ResourceManager is connected.
///
/// Wiring (the Dispatcher's job master runner): spawn with the JobGraph, the leader session id
/// the runner was granted, and the services; `on_terminal` is called once, from this actor, when
/// the job reaches a globally terminal state (or could not be started), and should forward into
/// the Dispatcher with run_async. Endpoint id: "job_master/<job id>".
///
/// The bookkeeping and its decisions live in `job_master_state` (plain C++, tested without
/// actors); this actor does the messaging, heartbeats, the SlotPool and leader retrieval.

#include <chrono>

#include <caf/actor_addr.hpp>
#include <caf/actor_clock.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/job_master/checkpoint/checkpoint_coordinator.hpp"
#include "runtime/actors/job_master/checkpoint/shared_state_registry.hpp"
#include "runtime/actors/job_master/failover_settings.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/job_master/job_master_result.hpp"
#include "runtime/actors/job_master/job_master_state.hpp"
#include "runtime/actors/job_master/scheduler/scheduler.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/registration/retrying_registration.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/graph/job_graph.hpp"

namespace flint::heartbeat {
class heartbeat_manager;
class peer_heartbeat_listener;
} // namespace flint::heartbeat

namespace spdlog {
class logger;
}

namespace flint::state {
class checkpoint_storage;
}

namespace flint::ha {
class ha_stores;
class checkpoint_id_counter;
class completed_checkpoint_store;
} // namespace flint::ha

namespace flint::job_master {

struct job_master_config {
  /// `heartbeat.interval` / `heartbeat.timeout` towards TaskExecutors and the ResourceManager.
  heartbeat::heartbeat_config heartbeat;
  /// Back-off of the registration at the ResourceManager.
  registration::retrying_registration_config registration;
  /// `slot.request.timeout` (Flink: 5 min), for the SlotPool.
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  /// `slot.idle.timeout` (Flink: 50 s), for the SlotPool.
  std::chrono::nanoseconds slot_idle_timeout = std::chrono::seconds(50);
  /// The cluster's configuration: `restart-strategy.*` and
  /// `jobmanager.execution.failover-strategy` are read from it, under the job's own settings.
  config::configuration configuration;
};

struct job_master_services {
  /// Where the ResourceManager leader is retrieved; must outlive the actor.
  leader::ha_services* ha = nullptr;
  /// The node's directory: TaskExecutors that register are put there, the SlotPool too, and
  /// the ResourceManager is looked up there when its leader address has no handle.
  rpc::endpoint_directory* directory = nullptr;
  /// Called once from the JobMaster's main thread with the job's final state.
  std::function<void(job_master_result)> on_terminal;
  /// Where Flink's log lines go; null: `make_endpoint_logger(<endpoint id>)` when the endpoint is
  /// made, on the sinks and at the level `configure_logging` set (stderr from info if never called).
  /// The SlotPool logs to a logger named after itself on the same sinks, at the same level.
  std::shared_ptr<spdlog::logger> logger = nullptr;
  /// The HA stores (ZooKeeper or in memory): the job's CheckpointIDCounter and
  /// CompletedCheckpointStore come from there, so a JobMaster of the next leader resumes from
  /// the latest completed checkpoint. Null: checkpoints are known to this JobMaster only.
  ha::ha_stores* stores = nullptr;
  /// Whether this JobMaster's leadership still holds (Dispatcher session and latch), asked before
  /// it acts on a message it dequeued: a JobManager that wakes after its ZooKeeper session expired
  /// must refuse every fenced call and write nothing. Null: always (no HA).
  std::function<bool()> leads;
};

class job_master : public rpc::rpc_endpoint,
                   private scheduler_actions,
                   private checkpoint::checkpoint_actions {
public:
  job_master(caf::actor_config& cfg, rpc::endpoint_context ctx, graph::job_graph job,
             cluster::job_master_id token, job_master_config config, job_master_services services);
  ~job_master() override;

  // -- inspection (tests; read between steps) ---------------------------------------------------

  graph::job_status status() const { return state_.status(); }
  /// Null when the ExecutionGraph could not be built.
  const scheduler* job_scheduler() const { return state_.job_scheduler(); }
  /// The SlotPool actor (valid once started).
  const caf::actor& slot_pool_actor() const { return slot_pool_; }
  bool is_registered_task_manager(const cluster::resource_id& id) const {
    return state_.is_registered_task_manager(id);
  }
  /// True once registered at the current ResourceManager.
  bool connected_to_resource_manager() const { return state_.is_connected_to_resource_manager(); }
  /// Null when the job does not checkpoint.
  const checkpoint::checkpoint_coordinator* checkpoint_coordinator() const {
    return checkpoints_.get();
  }

protected:
  void on_start() override;
  void on_exit() override;
  /// No token while the leadership cannot be confirmed: every fenced call is refused.
  rpc::fencing_token expected_token(const rpc::envelope& e) const override;

private:
  class resource_manager_leader_listener;

  void register_methods();
  void start_job_master_services();
  void reset_and_start_scheduler();
  void fail_before_start(const std::string& cause);

  // Resource manager connection.
  void notify_resource_manager_leader(const leader::leader_address& address,
                                      const cluster::resource_manager_id& id);
  void connect_to_resource_manager(const leader::leader_address& address,
                                   const cluster::resource_manager_id& id);
  void on_registered_at_resource_manager(
    std::uint64_t generation, const resource_manager::job_master_registration_success& s);
  /// Closes the ResourceManager connection; with `notify_resource_manager` the RM is told.
  void close_resource_manager_connection(const std::string& cause, bool notify_resource_manager);
  void reconnect_to_resource_manager(const std::string& cause);

  // Task executors.
  void disconnect_task_manager(const cluster::resource_id& id, const std::string& cause);
  /// Runs `f` now if the leadership holds, else checks again shortly (until this JobMaster
  /// stops): timers and peers' losses are not acted on by a JobMaster that may be deposed.
  void when_leading(std::string what, std::function<void()> f);
  /// A heartbeat of TaskManager `id` listed the job's executions it holds: missing ones fail,
  /// unknown ones are cancelled there (Flink's ExecutionDeploymentReconciliationHandler).
  void reconcile_deployments(const cluster::resource_id& id,
                             const std::vector<graph::execution_attempt_id>& deployed);
  std::optional<rpc::gateway> task_executor_gateway(const slot_pool::allocated_slot& slot) const;

  // scheduler_actions
  void allocate_slot(const slot_pool::slot_request_id& request,
                     const cluster::resource_profile& profile) override;
  void release_slot(const slot_pool::slot_request_id& request, const std::string& cause) override;
  void submit_task(const graph::execution_attempt_id& attempt,
                   const slot_pool::allocated_slot& slot,
                   graph::task_deployment_descriptor tdd) override;
  void cancel_task(const graph::execution_attempt_id& attempt,
                   const slot_pool::allocated_slot& slot) override;
  void job_status_changed(graph::job_status from, graph::job_status to,
                          const std::string& cause) override;
  void schedule_restart(std::chrono::milliseconds delay, std::uint64_t restart) override;
  void release_partitions(const cluster::resource_id& task_manager,
                          std::vector<graph::intermediate_result_partition_id> partitions) override;
  void tasks_restarting(const std::vector<std::uint32_t>& vertices) override;
  void job_reached_terminal_state(graph::job_status status, const std::string& cause);
  rpc::gateway slot_pool_gateway() const;

  // Checkpoints (job_master_checkpoints.cpp).
  /// The coordinator and the checkpoint storage from the job's settings; false when they are
  /// invalid (the job then fails before it starts).
  bool create_checkpoint_coordinator();
  /// `flint run -s`: the savepoint's metadata, checked against the job's operators; false (the
  /// job fails before it starts) when it cannot be read or does not match.
  bool restore_initial_state();
  void register_checkpoint_methods();
  /// The job's status with its checkpoint figures, settings and history (request_job_status,
  /// and the last one the Dispatcher archives).
  job_status_response full_status_report() const;
  /// The job's status changed: the periodic triggers run while it is RUNNING.
  void checkpoint_job_status_changed(graph::job_status to);
  /// The TaskDeploymentDescriptor of a (re)deployed task gets its checkpoint settings and, when
  /// a checkpoint completed, the state it restores (Flink's JobManagerTaskRestore).
  expected<unit> add_checkpoint_settings(graph::task_deployment_descriptor& tdd);
  std::optional<rpc::gateway> task_executor_of(const graph::execution_attempt_id& attempt) const;
  /// Milliseconds since the epoch, on the scheduler's clock.
  checkpoint::time_ms now_ms() const;

  // checkpoint_actions
  checkpoint::checkpoint_plan plan_checkpoint() override;
  void trigger_checkpoint(const graph::execution_attempt_id& task, std::int64_t checkpoint_id,
                          checkpoint::time_ms timestamp) override;
  void notify_checkpoint_complete(const graph::execution_attempt_id& task,
                                  std::int64_t checkpoint_id) override;
  void notify_checkpoint_aborted(const graph::execution_attempt_id& task,
                                 std::int64_t checkpoint_id) override;
  void schedule_trigger(std::chrono::milliseconds delay, std::uint64_t generation) override;
  void schedule_timeout(std::chrono::milliseconds delay, std::int64_t checkpoint_id) override;
  void fail_job(const std::string& cause) override;
  expected<checkpoint::finalized_checkpoint> finalize_checkpoint(
    const checkpoint::pending_checkpoint& p) override;
  void discard_checkpoint(const checkpoint::completed_checkpoint& c) override;
  /// The job's execution from its checkpoint coordinator on (on_start's second half; again when
  /// a recovery is retried).
  void start_execution();
  /// The latest checkpoint could not be read: tried again after the restart strategy's back-off
  /// while it allows, else the job fails. False in both cases (nothing more to do now).
  bool retry_recovery(const std::string& cause);
  /// Whether this JobMaster's leadership holds (services_.leads; always without HA). Checkpoint
  /// ids, completed checkpoints and deletions are the leader's alone.
  bool leads() const;
  /// Deletes the shared state files nothing can refer to again (`job_ended`: none can).
  void delete_unused_shared_state(bool job_ended);
  /// A snapshot restored in CLAIM mode was subsumed: its files go.
  void discard_claimed_snapshot(const checkpoint::completed_checkpoint& c);
  expected<std::int64_t> reserve_checkpoint_id(std::int64_t proposed) override;
  /// Retains the checkpoints the completed checkpoint store lists (a former leader's).
  bool recover_checkpoints();

  graph::job_graph job_graph_;
  graph::job_id job_id_;
  cluster::job_master_id initial_token_;
  job_master_config config_;
  job_master_services services_;
  std::shared_ptr<spdlog::logger> logger_;

  /// The bookkeeping: the scheduler and result, TaskExecutors, the ResourceManager connection.
  job_master_state state_;

  std::unique_ptr<checkpoint::checkpoint_coordinator> checkpoints_;
  /// Where checkpoints are written (`state.checkpoints.dir`); null: the JobManager's memory.
  std::unique_ptr<state::checkpoint_storage> checkpoint_storage_;
  /// Files under `shared/` (incremental RocksDB SSTs) and the retained checkpoints that refer to
  /// them: one goes when none does and no checkpoint still to complete can.
  checkpoint::shared_state_registry shared_state_;
  /// From `services_.stores` (null without).
  std::unique_ptr<ha::checkpoint_id_counter> checkpoint_ids_;
  std::unique_ptr<ha::completed_checkpoint_store> completed_store_;
  /// `state.backend.type` and `state.backend.incremental`, for the tasks.
  std::string state_backend_ = "hashmap";
  bool incremental_checkpoints_ = false;
  /// The job's `state.backend.rocksdb.*` keys (its own over the cluster's), for the tasks.
  std::map<std::string, std::string> state_backend_configuration_;
  /// The savepoint or checkpoint the job started from (until a checkpoint of its own completes).
  std::optional<checkpoint::completed_checkpoint> initial_restore_;
  /// The restart and failover strategies from on_start until the scheduler takes them.
  failover_settings failover_;
  /// The path of a snapshot restored in CLAIM mode, while it is retained: the job deletes it.
  std::optional<std::string> claimed_snapshot_;
  /// What the job started from, as REST's checkpoint statistics show it (id -1: nothing).
  restored_checkpoint restored_;
  /// The checkpoint and restart whose restore was last logged.
  std::optional<std::pair<std::int64_t, std::size_t>> restore_logged_;

  caf::actor slot_pool_;
  std::unique_ptr<heartbeat::peer_heartbeat_listener> tm_listener_;
  std::unique_ptr<heartbeat::peer_heartbeat_listener> rm_listener_;
  std::unique_ptr<heartbeat::heartbeat_manager> tm_heartbeats_;
  std::unique_ptr<heartbeat::heartbeat_manager> rm_heartbeats_;
  std::unique_ptr<resource_manager_leader_listener> rm_leader_listener_;
  std::unique_ptr<leader::leader_retrieval_service> rm_retrieval_;
  /// The registration at the current ResourceManager connection, while it retries.
  std::unique_ptr<
    registration::retrying_registration<resource_manager::job_master_registration_success>>
    rm_registration_;
  /// The wall clock at start and CAF's clock then: the scheduler's clock is CAF's (manual in
  /// tests) shifted to the epoch, for the exception history's timestamps.
  std::chrono::nanoseconds epoch_at_start_{0};
  caf::actor_clock::time_point clock_at_start_;
};

} // namespace flint::job_master
