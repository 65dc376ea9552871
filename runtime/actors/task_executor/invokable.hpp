#pragma once
/// What a Task runs (Flink's AbstractInvokable, cut to the mailbox model): the task actor calls
/// `step()` once per mailbox turn, so control mails (cancel) are handled between two steps.
/// The Data plane fills this with StreamTasks; here it runs simple invokables.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "runtime/common/expected.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/state/checkpoint_metrics.hpp"
#include "runtime/state/state_handles.hpp"

namespace flint::metrics {
class task_io_metrics;
enum class wait_reason : std::uint8_t;
} // namespace flint::metrics

namespace flint::task_executor {

/// What the task offers its invokable (Flink's mailbox executor, seen from the invokable).
class task_context {
public:
  virtual ~task_context() = default;
  /// Thread-safe, callable from any thread, even after the task ended: asks for another step
  /// soon, waking a task that waits on its mailbox. Calls are coalesced into one mail.
  virtual void wake() = 0;
  /// Thread-safe: calls `invokable::on_timer(id)` in the task's thread after `delay` (a delayed
  /// mail, so the test clock drives it).
  virtual void schedule_timer(std::chrono::milliseconds delay, std::uint64_t id) = 0;
  /// The task's actor: where transports send what is meant for this task (the buffers and
  /// partition errors of its remote input channels, DESIGN.md "Channels are CAF messages to the
  /// consumer task's actor"). Invalid once the task ended. Call it from the task's thread.
  virtual caf::actor actor() const = 0;
  /// Watches `whom` (a transport's peer, e.g. a producer's partition request server): when it
  /// ends or its node becomes unreachable, the task's actor gets a `caf::down_msg`, handed to
  /// `invokable::on_message` like any other message it does not know. Call it from the task's
  /// thread.
  virtual void monitor(const caf::actor& whom) = 0;
  /// Raised (from any thread) when the task is to be cancelled or failed from outside, before
  /// the cancel mail arrives: a step that emits many records checks it between two of them and
  /// returns, so the mail is handled at once rather than after the whole step (a slow user
  /// function could make a step last seconds). Valid while the task lives.
  virtual const std::atomic<bool>* interrupt_flag() const = 0;
  /// Flink's CheckpointResponder: the task took its part of checkpoint `checkpoint_id` (its
  /// state, or where it wrote it), or declines it with `cause` — `task_not_ready` when the task
  /// could not take part for now (not running yet, closing, overtaken by a newer checkpoint),
  /// which does not count against the tolerable failed checkpoints. `metrics`: what the task
  /// measured of its part (Flink's CheckpointMetrics; -1 where it did not). Call them from the
  /// task's thread.
  virtual void acknowledge_checkpoint(std::int64_t checkpoint_id, state::task_state_snapshot state,
                                      const state::checkpoint_metrics& metrics = {}) = 0;
  virtual void decline_checkpoint(std::int64_t checkpoint_id, const std::string& cause,
                                  bool task_not_ready) = 0;
  /// Records `what` happened in the task (e.g. "watermark_status") with `detail` in the node's
  /// message trace, so the trace explains the data plane too (an idle input, the channel that
  /// holds a watermark back). Any thread; dropped when the node records no trace.
  virtual void trace(const std::string& what, const std::string& detail) {
    (void)what;
    (void)detail;
  }
};

struct invokable {
  virtual ~invokable();

  /// Called once, in the task's thread, right after the invokable was made.
  virtual void attach(std::shared_ptr<task_context> context) { (void)context; }

  /// A timer of `task_context::schedule_timer` fired. Exceptions fail the task.
  virtual void on_timer(std::uint64_t id) { (void)id; }

  /// A message the task's actor has no handler for (a remote channel's buffer, credit, error or
  /// retry mail), handled as a control mail on the task's thread between two steps. True when
  /// the invokable took it; false drops it. Exceptions fail the task; afterwards the task steps
  /// again if `has_work()`.
  virtual bool on_message(caf::type_erased_tuple& content) {
    (void)content;
    return false;
  }

  /// One unit of work: true when done, false when there is more; an error (or an exception)
  /// fails the task with its message.
  virtual expected<bool> step() = 0;

  /// The task is being cancelled: stop soon. Called from the task's own thread.
  virtual void cancel() {}

  /// A source task starts checkpoint `checkpoint_id` (the JobMaster's trigger): it takes its
  /// snapshot, sends the barrier downstream and acknowledges through its context; with `stop`
  /// (stop-with-savepoint) a source then ends its input. False: this task takes no part in
  /// checkpoints (the task then declines it).
  /// The next trigger_checkpoint with `stop` is a stop-with-savepoint --drain: the source runs
  /// event time to its end before the barrier (Flink's StopMode.DRAIN).
  virtual void drain_before_stop() {}
  virtual bool trigger_checkpoint(std::int64_t checkpoint_id, std::int64_t timestamp, bool stop) {
    (void)checkpoint_id;
    (void)timestamp;
    (void)stop;
    return false;
  }
  /// Checkpoint `checkpoint_id` completed (Flink's notifyCheckpointComplete) or was aborted.
  virtual void notify_checkpoint_complete(std::int64_t checkpoint_id) { (void)checkpoint_id; }
  virtual void notify_checkpoint_aborted(std::int64_t checkpoint_id) { (void)checkpoint_id; }

  /// False while there is nothing to do until a mail arrives: the task then waits on its
  /// mailbox instead of stepping again (it never spins).
  virtual bool has_work() const { return true; }

  /// Flink's task I/O metrics: the figures the invokable counts into (records, bytes), given
  /// once before its first step when the TaskExecutor reports metrics.
  virtual void bind_metrics(std::shared_ptr<metrics::task_io_metrics> io) { (void)io; }
  /// After a step that left no work: waiting for input (idle) or for an output buffer
  /// (backpressured). The task times both.
  virtual bool waits_for_output() const { return false; }
};

/// Builds the invokable of a deployed task (in the task's own thread).
using invokable_factory =
  std::function<std::unique_ptr<invokable>(const graph::task_deployment_descriptor&)>;

/// Done at its first step.
struct noop_invokable : invokable {
  expected<bool> step() override { return true; }
};

/// Never done until cancelled: it waits on its mailbox after its first step.
struct blocking_invokable : invokable {
  expected<bool> step() override { return cancelled_; }
  void cancel() override { cancelled_ = true; }
  bool has_work() const override { return false; }

private:
  bool cancelled_ = false;
};

/// Done after `steps` steps, or fails at step `fail_at` (1-based; 0 = never) with `cause`.
struct counting_invokable : invokable {
  explicit counting_invokable(int steps, int fail_at = 0, std::string cause = "invokable failed")
    : steps_(steps),
      fail_at_(fail_at),
      cause_(std::move(cause)) {}
  expected<bool> step() override {
    ++done_;
    if (done_ == fail_at_)
      return make_error(errc::internal, cause_);
    return done_ >= steps_;
  }
  int steps_done() const { return done_; }

private:
  int steps_;
  int fail_at_;
  std::string cause_;
  int done_ = 0;
};

/// A factory that makes `T` for every task.
template <class T, class... Args>
invokable_factory make_invokable_factory(Args... args) {
  return [args...](const graph::task_deployment_descriptor&) -> std::unique_ptr<invokable> {
    return std::make_unique<T>(args...);
  };
}

} // namespace flint::task_executor
