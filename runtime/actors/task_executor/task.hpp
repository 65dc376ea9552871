#pragma once
/// One deployed subtask (Flink's Task): a CAF actor of its own — `caf::detached` (a thread of
/// its own) in production — whose mailbox is the task's mailbox. It reports DEPLOYING →
/// INITIALIZING → RUNNING → FINISHED (or FAILED with the cause, or CANCELED) to its
/// TaskExecutor, which forwards each state to the JobMaster. Between two `step()`s of the
/// invokable it sends itself the next step, so a cancel mail is handled in between.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/task_executor/invokable.hpp"

namespace flint::task_executor {

/// Asks a task to stop: CANCELED.
using task_cancel_atom = caf::atom_constant<caf::atom("tsk_cancel")>;
/// Fails a task from outside, with a cause (a string): FAILED.
using task_fail_atom = caf::atom_constant<caf::atom("tsk_fail")>;
/// The next step of the invokable; also wakes a task that waits on its mailbox.
using task_step_atom = caf::atom_constant<caf::atom("tsk_step")>;

/// Wakes a task whose invokable waits for something (see task_context::wake).
using task_wake_atom = caf::atom_constant<caf::atom("tsk_wake")>;
/// A timer of the invokable fired; carries the timer id.
using task_timer_atom = caf::atom_constant<caf::atom("tsk_timer")>;
/// Starts a checkpoint at this (source) task: (atom, checkpoint id, timestamp).
using task_checkpoint_atom = caf::atom_constant<caf::atom("tsk_chkpt")>;
/// A checkpoint completed (true) or was aborted (false): (atom, checkpoint id, bool).
using task_checkpoint_done_atom = caf::atom_constant<caf::atom("tsk_chkdn")>;

struct task_setup {
  graph::task_deployment_descriptor tdd;
  cluster::allocation_id allocation;
  invokable_factory invokables;
  /// Called from the task's thread with every state change; must be safe to call from there
  /// (the TaskExecutor's version sends the state into its own mailbox).
  std::function<void(const cluster::task_execution_state&)> report;
  /// Raised by the TaskExecutor before it sends a cancel or fail mail (see
  /// task_context::interrupt_flag); null: the task makes its own, never raised from outside.
  std::shared_ptr<std::atomic<bool>> interrupt;
  /// Called from the task's thread when the task acknowledges or declines a checkpoint (the
  /// TaskExecutor's version tells the JobMaster); null: dropped.
  std::function<void(std::int64_t checkpoint_id, state::task_state_snapshot state,
                     const state::checkpoint_metrics& metrics)>
    acknowledge_checkpoint = nullptr;
  std::function<void(std::int64_t checkpoint_id, const std::string& cause, bool task_not_ready)>
    decline_checkpoint = nullptr;
  /// Where the task's I/O and time figures go (registered by the TaskExecutor); null: none.
  std::shared_ptr<metrics::task_io_metrics> io = nullptr;
  /// Records a data-plane event of the task in the node's trace (task_context::trace); any
  /// thread. Null: dropped.
  std::function<void(const std::string& what, const std::string& detail)> trace = nullptr;
};

class task : public caf::event_based_actor {
public:
  task(caf::actor_config& cfg, task_setup setup);
  ~task() override;

  caf::behavior make_behavior() override;
  const char* name() const override { return "flint.task"; }
  /// Destroys the invokable when the actor ends any other way (an exit message): what it holds
  /// (gates, transport clients holding this actor's handle) must not outlive the task.
  void on_exit() override;

  static graph::execution_attempt_id attempt_of(const graph::task_deployment_descriptor& tdd);

private:
  void start_invokable();
  void do_step();
  void decline(std::int64_t checkpoint_id, const std::string& cause, bool task_not_ready);
  void end_with(graph::execution_state final_state, std::string cause = {});
  void report_state(graph::execution_state s, std::string cause = {});
  void queue_step_if_working();
  /// The default handler: hands a message the behavior does not know to the invokable.
  bool offer_to_invokable(caf::type_erased_tuple& content);

  class context;

  task_setup setup_;
  graph::execution_attempt_id attempt_;
  std::unique_ptr<invokable> invokable_;
  std::shared_ptr<context> context_;
  graph::execution_state state_ = graph::execution_state::created;
  bool step_queued_ = false;
};

} // namespace flint::task_executor
