#pragma once
/// The JobMaster's scheduler (Flink's DefaultScheduler with the PipelinedRegionSchedulingStrategy
/// and slot sharing): owns the ExecutionGraph, schedules pipelined regions in topological order
/// once their inputs are consumable, allocates one physical slot per (slot sharing group,
/// subtask index), deploys each region when all its slots are there (`Execution#deploy` checks),
/// follows task states to the job's end, cancels, and recovers failed tasks: the failover
/// strategy names the tasks to restart, the restart strategy whether and after which delay.
///
/// Plain C++: no CAF, no clock. Requests to the SlotPool and TaskExecutors go out through
/// `scheduler_actions`; their answers come back through the `on_*` methods. Every ExecutionState
/// and JobStatus change goes through the graph's transition rules.

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/job_master/failover/exception_history.hpp"
#include "runtime/actors/job_master/failover/failover_strategy.hpp"
#include "runtime/actors/job_master/failover/restart_backoff_time_strategy.hpp"
#include "runtime/actors/slot_pool/slot_pool_gateway.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

namespace spdlog {
class logger;
}

namespace flint::job_master {

/// What the scheduler asks its JobMaster to do; called synchronously from its methods.
class scheduler_actions {
public:
  virtual ~scheduler_actions() = default;
  /// SlotPool `allocate_slot`; answer with `scheduler::on_slot_allocated`.
  virtual void allocate_slot(const slot_pool::slot_request_id& request,
                             const cluster::resource_profile& profile) = 0;
  /// SlotPool `release_slot` (a pending request is withdrawn).
  virtual void release_slot(const slot_pool::slot_request_id& request,
                            const std::string& cause) = 0;
  /// TaskExecutor `submit_task`; answer with `scheduler::on_submit_result`.
  virtual void submit_task(const graph::execution_attempt_id& attempt,
                           const slot_pool::allocated_slot& slot,
                           graph::task_deployment_descriptor tdd) = 0;
  /// TaskExecutor `cancel_task`; answer with `scheduler::on_cancel_result`.
  virtual void cancel_task(const graph::execution_attempt_id& attempt,
                           const slot_pool::allocated_slot& slot) = 0;
  /// The job moved from `from` to `to`; `cause` is set for FAILED/FAILING.
  virtual void job_status_changed(graph::job_status from, graph::job_status to,
                                  const std::string& cause) = 0;
  /// Calls `scheduler::on_restart_delay_elapsed(restart)` after `delay`, from the main thread.
  virtual void schedule_restart(std::chrono::milliseconds delay, std::uint64_t restart) = 0;
  /// A failure restarts these vertices (they are being cancelled now): checkpoints in progress
  /// cannot complete any more (Flink aborts them with JOB_FAILOVER_REGION).
  virtual void tasks_restarting(const std::vector<std::uint32_t>& vertices) { (void)vertices; }
  /// TaskExecutor `release_partitions`: every consumer of these blocking partitions there is done.
  virtual void release_partitions(
    const cluster::resource_id& task_manager,
    std::vector<graph::intermediate_result_partition_id> partitions) = 0;
};

/// Builds the failover strategy over the scheduler's own ExecutionGraph.
using failover_strategy_factory =
  std::function<std::unique_ptr<failover::failover_strategy>(const graph::execution_graph&)>;

struct scheduler_settings {
  /// The TaskExecutor call time-out (`rpc.ask.timeout`), quoted when a deployment times out.
  std::chrono::nanoseconds rpc_timeout = std::chrono::seconds(10);
  /// Whether and when failed tasks restart; null: never (every failure fails the job).
  std::shared_ptr<failover::restart_backoff_time_strategy> restart_strategy;
  /// Which tasks restart with a failed one; null: Flink's region strategy.
  failover_strategy_factory failover_strategy;
  /// The caller's clock (milliseconds since the epoch in the exception history); null: 0.
  std::function<std::chrono::nanoseconds()> clock;
};

class scheduler {
public:
  /// `logger` may be null.
  scheduler(graph::execution_graph graph, scheduler_settings settings, scheduler_actions& actions,
            std::shared_ptr<spdlog::logger> logger);

  /// The job goes CREATED → RUNNING and the regions whose inputs are consumable (the source
  /// regions) are scheduled in topological order.
  void start_scheduling();

  /// The SlotPool answered the allocate_slot of `request`.
  void on_slot_allocated(const slot_pool::slot_request_id& request,
                         expected<slot_pool::allocated_slot> result);

  /// The TaskExecutor answered a submit_task: an error fails the execution (a time-out with
  /// Flink's "not responding after a rpcTimeout" message).
  void on_submit_result(const graph::execution_attempt_id& attempt, expected<unit> result);

  /// The TaskExecutor answered a cancel_task: an error fails the canceling execution.
  void on_cancel_result(const graph::execution_attempt_id& attempt, expected<unit> result);

  /// The delay of restart `restart` (see scheduler_actions::schedule_restart) is over: the
  /// tasks waiting for it are restarted once every one of them is terminal. A stale number
  /// (a later failure scheduled its own delay) is ignored.
  void on_restart_delay_elapsed(std::uint64_t restart);

  /// A task's new state from its TaskExecutor. Fails with errc::not_found for an attempt that
  /// is not the current one of its vertex.
  expected<unit> update_task_execution_state(const cluster::task_execution_state& state);

  /// The job goes CANCELLING: executions not deployed yet are canceled, deployed ones get a
  /// cancel_task; CANCELED once every execution is terminal.
  void cancel();

  /// Fails the job without restart: FAILING, every other execution is canceled, FAILED once
  /// every execution is terminal. The first cause wins.
  void fail_job(const std::string& cause);

  /// A failure of the whole job, not of one task (Flink's handleGlobalFailure: the checkpoint
  /// failure threshold, for one): every task restarts if the restart strategy allows, else the
  /// job fails.
  void handle_global_failure(const std::string& cause);

  /// A TaskExecutor is gone: its slots are dead, the executions in them FAILED with `cause`,
  /// and each is recovered as a task failure (the blocking partitions it held are lost too).
  /// Returns how many executions it failed.
  std::size_t fail_task_manager(const cluster::resource_id& task_manager, const std::string& cause);

  /// One slot failed at its TaskExecutor: as above for the executions in it.
  std::size_t fail_slot(const cluster::allocation_id& allocation, const std::string& cause);

  /// Flink's ExecutionDeploymentReconciler, for one heartbeat of `task_manager` listing every
  /// execution of the job it holds (`deployed`). An execution expected there — its submission
  /// was acknowledged and it is not terminal — that the list lacks FAILS ("unexpectedly no
  /// longer running"), and the job recovers under its strategies. Returns the listed executions
  /// this scheduler does not expect (older attempts, executions it holds terminal): the caller
  /// cancels them at the TaskExecutor.
  std::vector<graph::execution_attempt_id> reconcile_deployments(
    const cluster::resource_id& task_manager,
    const std::vector<graph::execution_attempt_id>& deployed);

  // -- inspection ---------------------------------------------------------------------------------

  const graph::execution_graph& graph() const noexcept { return graph_; }
  graph::job_status status() const noexcept { return graph_.state(); }
  const std::string& failure_cause() const noexcept { return failure_cause_; }
  /// Every failure so far (newest first) and the number of restarts.
  const failover::exception_history& exception_history() const noexcept { return history_; }
  /// Tasks cancelled for a restart that has not happened yet.
  std::size_t tasks_pending_restart() const noexcept { return pending_restart_.size(); }
  /// Slot requests not served yet, with how long each has waited (per the scheduler's clock).
  std::vector<std::pair<slot_pool::slot_request_id, std::chrono::nanoseconds>>
  pending_slot_requests() const;
  /// Physical slots held or requested (one per sharing group and subtask index in use).
  std::size_t shared_slot_count() const noexcept { return shared_slots_.size(); }
  /// The regions in the order they are scheduled (indices into graph().regions()).
  const std::vector<std::uint32_t>& region_order() const noexcept { return region_order_; }
  /// The vertex of an attempt, if it is the current attempt of its vertex in this graph.
  std::optional<std::uint32_t> vertex_of(const graph::execution_attempt_id& attempt) const;
  /// The slot an execution was assigned, if any.
  std::optional<slot_pool::allocated_slot> slot_of(std::uint32_t vertex) const;
  /// The slot the vertex's latest attempt was deployed to (kept after the slot is released).
  const std::optional<slot_pool::allocated_slot>& deployed_to(std::uint32_t vertex) const {
    return deployed_to_[vertex];
  }
  /// Flink's state timestamps of the vertex's latest attempt, in milliseconds since the epoch
  /// per the scheduler's clock: when it went DEPLOYING and when it reached a terminal state
  /// (-1: not yet; the end is cleared when an attempt deploys again).
  std::int64_t deploying_at_ms(std::uint32_t vertex) const { return deploying_at_ms_[vertex]; }
  std::int64_t ended_at_ms(std::uint32_t vertex) const { return ended_at_ms_[vertex]; }

private:
  /// A physical slot shared by the subtasks with one index of one slot sharing group.
  using slot_key = std::pair<std::size_t, std::int32_t>;
  struct shared_slot {
    slot_pool::slot_request_id request;
    std::optional<slot_pool::allocated_slot> slot;
    bool alive = true;
    std::set<std::uint32_t> users;
    /// When it was requested (the scheduler's clock).
    std::chrono::nanoseconds requested_at{0};
  };

  void compute_region_order();
  bool region_inputs_consumable(std::uint32_t region) const;
  /// The partitions a vertex produces (indices into graph().partitions()).
  std::vector<std::uint32_t> produced_partitions(std::uint32_t vertex) const;
  /// Counts the partitions of a FINISHED vertex towards the groups that read them.
  void partitions_finished(std::uint32_t vertex);
  /// The vertex runs again: its partitions are neither finished nor released any more.
  void partitions_rewritten(std::uint32_t vertex);
  void maybe_schedule_regions();
  void schedule_region(std::uint32_t region);
  void deploy_ready_batches();
  void deploy(std::uint32_t vertex);
  bool transition(std::uint32_t vertex, graph::execution_state to, const std::string& cause = {});
  void transition_job(graph::job_status to, const std::string& cause = {});
  /// Marks a non-terminal execution FAILED (directly, without a cancel call) and fails the job.
  void mark_failed(std::uint32_t vertex, const std::string& cause);
  void vertex_terminal(std::uint32_t vertex);
  void cancel_all_executions();
  void check_job_terminal();
  /// Recovers from the failure of `vertex` (already FAILED): restart its tasks or fail the job.
  void handle_task_failure(std::uint32_t vertex, const std::string& cause);
  /// Cancels one execution (withdraws its slot request, or asks its TaskExecutor).
  void cancel_execution(std::uint32_t vertex);
  /// Restarts the pending tasks once the delay is over and every one of them is terminal.
  void maybe_restart();
  /// Counts a failure against the restart strategy; false (and the job failed with `cause`)
  /// when it allows no restart.
  bool restart_allowed(const std::string& cause);
  bool partition_available(std::uint32_t partition) const;
  /// Flink's RegionPartitionGroupReleaseStrategy, per consumed group: a FINISHED consumer counts
  /// towards the blocking groups it reads; a partition whose groups are all done is released.
  void consumer_finished(std::uint32_t vertex);
  /// The vertex runs again: it no longer counts as a finished consumer.
  void consumer_restarts(std::uint32_t vertex);
  /// A consumed group of a blocking result: read across regions, released after its consumers.
  bool is_cross_region_group(std::uint32_t group) const;
  std::chrono::nanoseconds now() const;
  std::int64_t now_ms() const;
  std::size_t fail_slots_where(const std::function<bool(const slot_pool::allocated_slot&)>& lost,
                               const std::string& cause);
  std::string location_of(std::uint32_t vertex) const;
  void release_all_slots(const std::string& cause);
  std::string location_text(const slot_pool::allocated_slot& slot) const;
  shared_slot* slot_record(std::uint32_t vertex);
  void log_info(const std::string& text) const;

  graph::execution_graph graph_;
  scheduler_settings settings_;
  scheduler_actions& actions_;
  std::shared_ptr<spdlog::logger> logger_;
  std::string failure_cause_;

  std::vector<std::uint32_t> region_order_;
  /// Per region: the blocking consumed partition groups it reads (its inputs).
  std::vector<std::vector<std::uint32_t>> region_inputs_;
  /// Per consumed partition group read across regions: its partitions that are finished.
  std::vector<std::uint32_t> finished_in_group_;
  /// Per partition: the cross-region groups that contain it.
  std::vector<std::vector<std::uint32_t>> groups_of_partition_;
  std::vector<bool> region_scheduled_;
  std::map<slot_key, shared_slot> shared_slots_;
  std::map<slot_pool::slot_request_id, slot_key> key_of_request_;
  std::vector<std::optional<slot_key>> slot_of_vertex_;
  /// Regions whose slots are being allocated: deployed all at once when complete.
  std::vector<std::vector<std::uint32_t>> batches_;
  std::uint64_t next_request_ = 1;

  // -- failover ---------------------------------------------------------------------------------
  std::unique_ptr<failover::failover_strategy> failover_strategy_;
  failover::exception_history history_;
  /// Per vertex: where its current or last attempt was deployed (kept after its slot is gone,
  /// so that a consumer of its blocking result can still find it).
  std::vector<std::optional<slot_pool::allocated_slot>> deployed_to_;
  std::vector<std::int64_t> deploying_at_ms_;
  std::vector<std::int64_t> ended_at_ms_;
  /// Per vertex: its TaskExecutor acknowledged the current attempt's submission, so each of its
  /// heartbeats must list it (Flink's ExecutionDeploymentTracker, pending vs deployed).
  std::vector<bool> deployment_confirmed_;
  /// Per partition: its producer FINISHED and counted in finished_in_group_.
  std::vector<bool> partition_finished_;
  std::set<cluster::resource_id> lost_task_managers_;
  /// Per consumed group read across regions: its consumer vertices, and how many are FINISHED.
  std::vector<std::uint32_t> consumers_of_group_;
  std::vector<std::uint32_t> finished_consumers_of_group_;
  /// Per partition: how many of its cross-region groups are done, and whether it was released.
  std::vector<std::uint32_t> done_groups_of_partition_;
  std::vector<bool> partition_released_;
  /// Per vertex: counted in finished_consumers_of_group_.
  std::vector<bool> consumer_counted_;
  std::set<std::uint32_t> pending_restart_;
  std::uint64_t restart_number_ = 0;
  bool restart_delay_elapsed_ = false;
};

} // namespace flint::job_master
