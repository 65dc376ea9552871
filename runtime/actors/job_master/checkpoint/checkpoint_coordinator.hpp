#pragma once
/// Flink's CheckpointCoordinator as plain logic the JobMaster drives on its main thread: it
/// decides when to trigger a checkpoint, tracks the acknowledgements of the tasks, completes or
/// aborts it, keeps the retained completed checkpoints and counts failures against
/// `execution.checkpointing.tolerable-failed-checkpoints`. What it cannot do itself (send the
/// RPCs, run timers, fail the job) it asks of `checkpoint_actions`; time comes in as arguments,
/// so tests drive it with a manual clock.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/actors/job_master/checkpoint/checkpoint_settings.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/execution.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_status.hpp"
#include "runtime/state/checkpoint_metrics.hpp"
#include "runtime/state/state_handles.hpp"

namespace spdlog {
class logger;
}

namespace flint::job_master::checkpoint {

using task_id = graph::execution_attempt_id;
/// Milliseconds on the JobMaster's clock.
using time_ms = std::int64_t;

/// Why a checkpoint did not complete or was not triggered (Flink's CheckpointFailureReason,
/// the ones that happen here).
enum class failure_reason {
  expired, ///< not complete within the time-out
  declined, ///< a task declined it
  task_not_ready, ///< a task was not ready or closing (Flink's CHECKPOINT_DECLINED_TASK_NOT_READY)
  finalize_failed, ///< the metadata could not be written
  not_all_required_tasks_running, ///< a task to trigger or acknowledge is not RUNNING
  too_many_concurrent, ///< max-concurrent-checkpoints are in progress
  subsumed, ///< a later checkpoint completed first
  job_failover, ///< the tasks were restarted
  coordinator_suspended, ///< the job stopped running
};

/// Flink's message for `r`, e.g. "Checkpoint expired before completing.".
const char* describe(failure_reason r);

/// Whether a failure counts against the tolerable failures (Flink's CheckpointFailureManager
/// ignores the ones that say nothing about the checkpoints themselves).
bool counts_as_failure(failure_reason r);

/// Which tasks a checkpoint involves, computed from the live states when it is triggered
/// (Flink's CheckpointPlan with finished tasks, FLIP-147).
struct checkpoint_plan {
  /// Get trigger_checkpoint: running tasks none of whose producers still run (the sources, and
  /// tasks whose inputs all finished).
  std::vector<task_id> to_trigger;
  /// Must all acknowledge, and are told of completion and aborts: every task not finished.
  std::vector<task_id> to_acknowledge;
  /// Finished already: recorded as finished in the checkpoint.
  std::vector<task_id> finished;
  /// Every task to trigger and acknowledge is RUNNING.
  bool all_running = true;
};

struct pending_checkpoint;
struct completed_checkpoint;

/// What finalizing a checkpoint produced: its metadata, and where it was written (empty when the
/// checkpoint lives only in the JobMaster's memory).
struct finalized_checkpoint {
  std::shared_ptr<const state::checkpoint_metadata> metadata;
  std::string external_pointer;
};

/// What the coordinator asks of its JobMaster.
class checkpoint_actions {
public:
  virtual ~checkpoint_actions() = default;
  /// The tasks a checkpoint triggered now involves.
  virtual checkpoint_plan plan_checkpoint() = 0;
  /// trigger_checkpoint to a source task.
  virtual void trigger_checkpoint(const task_id& task, std::int64_t checkpoint_id,
                                  time_ms timestamp) = 0;
  /// confirm_checkpoint: the task's operators get notify_checkpoint_complete.
  virtual void notify_checkpoint_complete(const task_id& task, std::int64_t checkpoint_id) = 0;
  /// abort_checkpoint: the task's operators get notify_checkpoint_aborted.
  virtual void notify_checkpoint_aborted(const task_id& task, std::int64_t checkpoint_id) = 0;
  /// Calls `on_trigger_timer(generation, …)` after `delay`.
  virtual void schedule_trigger(std::chrono::milliseconds delay, std::uint64_t generation) = 0;
  /// Calls `on_checkpoint_timeout(checkpoint_id, …)` after `delay`.
  virtual void schedule_timeout(std::chrono::milliseconds delay, std::int64_t checkpoint_id) = 0;
  /// Too many checkpoints failed in a row.
  virtual void fail_job(const std::string& cause) = 0;
  /// Every task acknowledged: the metadata is built from the tasks' states and written (Flink's
  /// PendingCheckpoint#finalizeCheckpoint). An error aborts the checkpoint (counted).
  virtual expected<finalized_checkpoint> finalize_checkpoint(const pending_checkpoint& p) = 0;
  /// A retained checkpoint is no longer needed (subsumed, or the job ended): its files go.
  virtual void discard_checkpoint(const completed_checkpoint& c) { (void)c; }
  /// The id of the checkpoint about to start (Flink's CheckpointIDCounter): `proposed` (the
  /// coordinator's own count) unless a counter shared with earlier leaders says higher.
  virtual expected<std::int64_t> reserve_checkpoint_id(std::int64_t proposed) { return proposed; }
};

/// A savepoint asked for (Flink's CheckpointType SAVEPOINT): where it goes, and who waits.
struct savepoint_request {
  /// The savepoint's own directory (savepoint-<job>-<random>), made by the JobMaster.
  std::string directory;
  /// Stop with a savepoint: the sources end right after its barrier.
  bool stop = false;
  /// Called once: the savepoint's path, or why it failed.
  std::function<void(expected<std::string>)> done;
  /// With stop: event time runs to its end before the barrier (Flink's --drain).
  bool drain = false;
};

struct pending_checkpoint {
  std::int64_t id = 0;
  /// Set: this is a savepoint (not retained, never counted against the tolerable failures).
  std::optional<savepoint_request> savepoint;
  time_ms trigger_time = 0;
  std::set<task_id> not_yet_acknowledged;
  std::set<task_id> acknowledged;
  /// The plan it was triggered with.
  checkpoint_plan plan;
  /// What each task acknowledged.
  std::map<task_id, state::task_state_snapshot> task_states;
  std::uint64_t state_bytes = 0;
};

struct completed_checkpoint {
  std::int64_t id = 0;
  time_ms trigger_time = 0;
  time_ms completion_time = 0;
  std::uint64_t state_bytes = 0;
  /// Where its `_metadata` is; empty when it lives in memory only.
  std::string external_pointer;
  std::shared_ptr<const state::checkpoint_metadata> metadata;
  friend bool operator==(const completed_checkpoint& a, const completed_checkpoint& b) {
    return a.id == b.id && a.trigger_time == b.trigger_time
      && a.completion_time == b.completion_time && a.state_bytes == b.state_bytes
      && a.external_pointer == b.external_pointer;
  }
};

/// The figures of Flink's /jobs/:id/checkpoints counts.
struct checkpoint_stats {
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t in_progress = 0;
  std::optional<completed_checkpoint> latest_completed;
};

/// One checkpoint or savepoint as the coordinator saw it, for REST's history (Flink's
/// AbstractCheckpointStats as its CheckpointStatsTracker keeps them).
struct checkpoint_record {
  enum class state { in_progress, completed, failed };
  std::int64_t id = 0;
  state status = state::in_progress;
  bool savepoint = false;
  /// A stop-with-savepoint.
  bool stop = false;
  time_ms trigger_time = 0;
  /// When it completed or failed; -1 while in progress.
  time_ms end_time = -1;
  std::uint64_t state_bytes = 0;
  std::string external_path;
  std::string failure_message;
  /// Each task that takes part: when it acknowledged (-1: not yet) and its state's size.
  std::map<task_id, std::pair<time_ms, std::uint64_t>> tasks;
  /// What each task that acknowledged measured (Flink's SubtaskStateStats figures).
  std::map<task_id, ::flint::state::checkpoint_metrics> task_metrics;
};

/// What an acknowledgement did (Flink's TaskAcknowledgeResult).
enum class acknowledge_result {
  success, ///< counted; the checkpoint may be complete now
  duplicate, ///< this task acknowledged it already
  unknown, ///< not a task this checkpoint waits for
  discarded, ///< the checkpoint is no longer pending (completed, aborted or never triggered)
};

class checkpoint_coordinator {
public:
  /// Which tasks take part is asked of `actions` at each trigger. `logger` may be null.
  checkpoint_coordinator(graph::job_id job, checkpoint_settings settings,
                         checkpoint_actions& actions, std::shared_ptr<spdlog::logger> logger);

  const checkpoint_settings& settings() const noexcept { return settings_; }

  /// Flink's startCheckpointScheduler: periodic triggers every `interval`, the first one
  /// `interval` from now. Does nothing when the interval is 0 (checkpointing disabled).
  void start_scheduler();
  /// No more periodic triggers; pending checkpoints are aborted (coordinator_suspended).
  void stop_scheduler(time_ms now);
  bool is_scheduler_running() const noexcept { return running_; }

  /// A periodic trigger is due. Stale timers (of a stopped or restarted scheduler) do nothing.
  void on_trigger_timer(std::uint64_t generation, time_ms now);

  /// Triggers a checkpoint now; its id, or why not (a failure_reason's text, errc::rejected).
  expected<std::int64_t> trigger_checkpoint(time_ms now);

  /// A checkpoint a user asked for (Flink's triggerCheckpoint from REST or the CLI): started now,
  /// not held back by the concurrent maximum or the pause (Flink queues such a request where a
  /// periodic one is dropped). Its id, or why it could not start.
  expected<std::int64_t> trigger_checkpoint_on_demand(time_ms now) { return start(now, {}); }

  /// Triggers a savepoint now, whatever the pause and the concurrent checkpoints; `request.done`
  /// is called when it completes or fails. Its id, or why it could not start (then `done` is not
  /// called).
  expected<std::int64_t> trigger_savepoint(time_ms now, savepoint_request request);

  /// The job starts from checkpoint or savepoint `checkpoint_id`: later checkpoints count on.
  void restored_from(std::int64_t checkpoint_id) {
    next_id_ = std::max(next_id_, checkpoint_id + 1);
  }

  /// A checkpoint a former leader completed (Flink's CompletedCheckpointStore recovery): retained
  /// as if completed here, so tasks restore it and it is subsumed and discarded in turn.
  void add_recovered(completed_checkpoint c);

  /// `metrics`: what the task measured, kept in the history (-1 figures: not measured).
  acknowledge_result acknowledge(const task_id& task, std::int64_t checkpoint_id,
                                 state::task_state_snapshot state, time_ms now,
                                 const state::checkpoint_metrics& metrics = {});
  /// A task declined: the checkpoint is aborted. Unknown checkpoints are ignored. Only
  /// `declined` counts against the tolerable failures (`task_not_ready` does not).
  void decline(const task_id& task, std::int64_t checkpoint_id, const std::string& cause,
               time_ms now, failure_reason reason = failure_reason::declined);
  void on_checkpoint_timeout(std::int64_t checkpoint_id, time_ms now);
  /// `task` reached FINISHED: a checkpoint still waiting for its acknowledgement will not get
  /// it (not counted against the tolerance; the next one plans it as finished).
  void task_finished(const task_id& task, time_ms now);
  /// A task finished, so others may now wait for a final checkpoint before they finish
  /// (FLIP-147): one is triggered at once rather than an interval later. With a checkpoint in
  /// progress (triggered before the task finished, so it is not the final one of the tasks that
  /// wait) it is triggered as soon as that one completes; within the pause after the last one,
  /// the periodic trigger brings it.
  void trigger_after_finished_task(time_ms now);

  /// Aborts every pending checkpoint (a failover restarted tasks); not counted as failures.
  void abort_pending(failure_reason reason, time_ms now);

  std::size_t number_of_pending() const noexcept { return pending_.size(); }
  const pending_checkpoint* pending(std::int64_t checkpoint_id) const;
  const std::map<std::int64_t, pending_checkpoint>& pending_checkpoints() const noexcept {
    return pending_;
  }
  /// The retained completed checkpoints, oldest first (at most `state.checkpoints.num-retained`).
  const std::deque<completed_checkpoint>& retained() const noexcept { return retained_; }
  /// The checkpoint a failover restores from, if any.
  const completed_checkpoint* latest_completed() const noexcept {
    return retained_.empty() ? nullptr : &retained_.back();
  }

  /// The job reached `status` (globally terminal): the scheduler stops, and the retained
  /// checkpoints are discarded unless the externalized-checkpoint retention keeps them (Flink's
  /// CheckpointProperties: always discarded when FINISHED; kept when FAILED if externalized; kept
  /// when CANCELED with RETAIN_ON_CANCELLATION).
  void shutdown(graph::job_status status, time_ms now);
  checkpoint_stats stats() const;

  /// The newest checkpoints and savepoints that started, oldest first, at most
  /// `history_size` of them (Flink's web.checkpoints.history, default 10).
  const std::deque<checkpoint_record>& history() const noexcept { return history_; }
  void set_history_size(std::size_t n);

private:
  void schedule_next(std::chrono::milliseconds delay);
  expected<std::int64_t> start(time_ms now, std::optional<savepoint_request> savepoint);
  void complete(pending_checkpoint p, time_ms now);
  void abort(std::int64_t checkpoint_id, failure_reason reason, const std::string& detail,
             time_ms now);
  void log_info(const std::string& text) const;

  graph::job_id job_;
  checkpoint_settings settings_;
  checkpoint_actions& actions_;
  std::shared_ptr<spdlog::logger> logger_;
  bool running_ = false;
  std::uint64_t generation_ = 0;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, pending_checkpoint> pending_;
  std::deque<completed_checkpoint> retained_;
  std::optional<time_ms> last_completion_;
  /// A task finished while a checkpoint was in progress or paused after: no checkpoint has
  /// been triggered since (trigger_after_finished_task).
  bool finished_task_waiting_ = false;
  std::int64_t completed_ = 0;
  std::int64_t failed_ = 0;
  std::int32_t consecutive_failures_ = 0;
  std::deque<checkpoint_record> history_;
  std::size_t history_size_ = 10;
  checkpoint_record* record(std::int64_t checkpoint_id);
};

} // namespace flint::job_master::checkpoint
