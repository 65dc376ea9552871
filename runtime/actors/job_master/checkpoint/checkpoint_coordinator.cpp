#include "runtime/actors/job_master/checkpoint/checkpoint_coordinator.hpp"

#include <algorithm>

#include <spdlog/logger.h>

namespace flint::job_master::checkpoint {

using std::chrono::milliseconds;

const char* describe(failure_reason r) {
  switch (r) {
    case failure_reason::expired: return "Checkpoint expired before completing.";
    case failure_reason::declined: return "Checkpoint was declined.";
    case failure_reason::task_not_ready:
      return "Checkpoint was declined (tasks not ready or closing).";
    case failure_reason::finalize_failed: return "Failure to finalize checkpoint.";
    case failure_reason::not_all_required_tasks_running:
      return "Not all required tasks are currently running.";
    case failure_reason::too_many_concurrent:
      return "The maximum number of queued checkpoint requests exceeded";
    case failure_reason::subsumed: return "Checkpoint has been subsumed.";
    case failure_reason::job_failover: return "The job has failed.";
    case failure_reason::coordinator_suspended: return "Checkpoint Coordinator is suspending.";
  }
  return "?";
}

bool counts_as_failure(failure_reason r) {
  return r == failure_reason::expired || r == failure_reason::declined
    || r == failure_reason::finalize_failed;
}

checkpoint_coordinator::checkpoint_coordinator(graph::job_id job, checkpoint_settings settings,
                                               checkpoint_actions& actions,
                                               std::shared_ptr<spdlog::logger> logger)
  : job_(job),
    settings_(settings),
    actions_(actions),
    logger_(std::move(logger)) {}

void checkpoint_coordinator::start_scheduler() {
  if (running_ || settings_.interval.count() <= 0)
    return;
  running_ = true;
  ++generation_;
  schedule_next(settings_.interval);
}

void checkpoint_coordinator::stop_scheduler(time_ms now) {
  running_ = false;
  ++generation_; // timers already scheduled find a newer generation and do nothing
  abort_pending(failure_reason::coordinator_suspended, now);
}

void checkpoint_coordinator::schedule_next(milliseconds delay) {
  actions_.schedule_trigger(delay, generation_);
}

void checkpoint_coordinator::on_trigger_timer(std::uint64_t generation, time_ms now) {
  if (!running_ || generation != generation_)
    return;
  if (pending_.size() >= static_cast<std::size_t>(settings_.max_concurrent)) {
    // Flink drops a periodic request while the maximum is in progress; the next one comes.
    schedule_next(settings_.interval);
    return;
  }
  if (last_completion_) {
    auto earliest = *last_completion_ + settings_.min_pause.count();
    if (now < earliest) {
      // The pause after the last completed checkpoint is not over: try again when it is.
      schedule_next(milliseconds(earliest - now));
      return;
    }
  }
  (void)trigger_checkpoint(now); // a failure is counted and logged there
  schedule_next(settings_.interval);
}

expected<std::int64_t> checkpoint_coordinator::trigger_checkpoint(time_ms now) {
  if (pending_.size() >= static_cast<std::size_t>(settings_.max_concurrent))
    return make_error(errc::rejected, describe(failure_reason::too_many_concurrent));
  return start(now, std::nullopt);
}

expected<std::int64_t> checkpoint_coordinator::trigger_savepoint(time_ms now,
                                                                 savepoint_request request) {
  return start(now, std::move(request));
}

expected<std::int64_t> checkpoint_coordinator::start(time_ms now,
                                                     std::optional<savepoint_request> savepoint) {
  const char* type = savepoint ? "SAVEPOINT" : "CHECKPOINT";
  auto plan = actions_.plan_checkpoint();
  if (!plan.all_running || plan.to_acknowledge.empty() || plan.to_trigger.empty()) {
    // Flink counts a checkpoint that could not start as failed, but not against the tolerance.
    ++failed_;
    log_info("Failed to trigger checkpoint for job " + job_.to_string() + " because "
             + describe(failure_reason::not_all_required_tasks_running));
    return make_error(errc::rejected, describe(failure_reason::not_all_required_tasks_running));
  }
  auto reserved = actions_.reserve_checkpoint_id(next_id_);
  if (!reserved) {
    ++failed_;
    log_info("Failed to trigger checkpoint for job " + job_.to_string()
             + ": no checkpoint id: " + reserved.error().message);
    return make_error(errc::rejected, "no checkpoint id: " + reserved.error().message);
  }
  next_id_ = std::max(next_id_, *reserved) + 1;
  pending_checkpoint p;
  p.id = *reserved;
  p.trigger_time = now;
  p.not_yet_acknowledged.insert(plan.to_acknowledge.begin(), plan.to_acknowledge.end());
  p.plan = std::move(plan);
  p.savepoint = std::move(savepoint);
  auto id = p.id;
  auto& pending = pending_.emplace(id, std::move(p)).first->second;
  finished_task_waiting_ = false; // this one covers every task finished so far
  checkpoint_record r;
  r.id = id;
  r.savepoint = pending.savepoint.has_value();
  r.stop = pending.savepoint && pending.savepoint->stop;
  r.trigger_time = now;
  for (const auto& task : pending.plan.to_acknowledge)
    r.tasks.emplace(task, std::pair<time_ms, std::uint64_t>{-1, 0});
  history_.push_back(std::move(r));
  while (history_.size() > history_size_)
    history_.pop_front();
  log_info("Triggering checkpoint " + std::to_string(id) + " (type=" + type + ") @ "
           + std::to_string(now) + " for job " + job_.to_string() + ".");
  actions_.schedule_timeout(settings_.timeout, id);
  // A copy: a trigger answered at once (an unreachable task declines) may abort the checkpoint.
  auto to_trigger = pending.plan.to_trigger;
  for (const auto& task : to_trigger)
    actions_.trigger_checkpoint(task, id, now);
  return id;
}

void checkpoint_coordinator::add_recovered(completed_checkpoint c) {
  next_id_ = std::max(next_id_, c.id + 1);
  auto at = std::find_if(retained_.begin(), retained_.end(),
                         [&](const completed_checkpoint& r) { return r.id >= c.id; });
  if (at != retained_.end() && at->id == c.id)
    return;
  retained_.insert(at, std::move(c));
}

acknowledge_result checkpoint_coordinator::acknowledge(const task_id& task,
                                                       std::int64_t checkpoint_id,
                                                       state::task_state_snapshot state,
                                                       time_ms now,
                                                       const state::checkpoint_metrics& metrics) {
  auto it = pending_.find(checkpoint_id);
  if (it == pending_.end()) {
    if (checkpoint_id < next_id_)
      log_info("Received late message for now expired checkpoint attempt "
               + std::to_string(checkpoint_id) + " from task " + task.to_string() + " of job "
               + job_.to_string() + ".");
    return acknowledge_result::discarded;
  }
  auto& p = it->second;
  if (p.acknowledged.count(task) > 0)
    return acknowledge_result::duplicate;
  if (p.not_yet_acknowledged.erase(task) == 0)
    return acknowledge_result::unknown;
  p.acknowledged.insert(task);
  if (auto* r = record(checkpoint_id)) {
    r->tasks[task] = {now, state.state_size()};
    r->task_metrics[task] = metrics;
  }
  p.state_bytes += state.state_size();
  p.task_states.emplace(task, std::move(state));
  if (p.not_yet_acknowledged.empty()) {
    auto done = std::move(p);
    pending_.erase(it);
    complete(std::move(done), now);
  }
  return acknowledge_result::success;
}

void checkpoint_coordinator::complete(pending_checkpoint p, time_ms now) {
  auto finalized = actions_.finalize_checkpoint(p);
  if (!finalized) {
    // Put back so that abort() finds it, tells the tasks and counts the failure.
    auto id = p.id;
    auto detail = finalized.error().message;
    log_info("Failed to finalize checkpoint " + std::to_string(id) + " of job " + job_.to_string()
             + ": " + detail);
    pending_.emplace(id, std::move(p));
    abort(id, failure_reason::finalize_failed, detail, now);
    return;
  }
  completed_checkpoint c{p.id,
                         p.trigger_time,
                         now,
                         p.state_bytes,
                         finalized->external_pointer,
                         std::move(finalized->metadata)};
  if (auto* r = record(c.id)) {
    r->status = checkpoint_record::state::completed;
    r->end_time = now;
    r->state_bytes = c.state_bytes;
    r->external_path = c.external_pointer;
  }
  if (p.savepoint) {
    // Not a checkpoint to restore on failover, and it subsumes nothing: it is the user's.
    ++completed_;
    log_info("Completed checkpoint " + std::to_string(c.id) + " for job " + job_.to_string() + " ("
             + std::to_string(c.state_bytes) + " bytes, checkpointDuration="
             + std::to_string(now - c.trigger_time) + " ms, finalizationTime=0 ms).");
    // Only stop-with-savepoint commits side effects (Flink 1.15+, FLIP-193): an intermediate
    // savepoint is never restored on failover, so a sink that committed on it would write its
    // records again after a failover to the checkpoint before it. Its pending files wait for
    // the next checkpoint.
    if (p.savepoint->stop)
      for (const auto& task : p.plan.to_acknowledge)
        actions_.notify_checkpoint_complete(task, c.id);
    if (p.savepoint->done)
      p.savepoint->done(c.external_pointer);
    return;
  }
  retained_.push_back(c);
  while (retained_.size() > static_cast<std::size_t>(settings_.num_retained)) {
    actions_.discard_checkpoint(retained_.front());
    retained_.pop_front();
  }
  last_completion_ = now;
  ++completed_;
  consecutive_failures_ = 0;
  log_info("Completed checkpoint " + std::to_string(c.id) + " for job " + job_.to_string() + " ("
           + std::to_string(c.state_bytes) + " bytes, checkpointDuration="
           + std::to_string(now - c.trigger_time) + " ms, finalizationTime=0 ms).");
  // Older checkpoints still pending can only be worse: Flink drops them as subsumed (not a
  // savepoint: the user waits for that one).
  std::vector<std::int64_t> older;
  for (const auto& [id, pending] : pending_)
    if (id < c.id && !pending.savepoint)
      older.push_back(id);
  for (auto id : older)
    abort(id, failure_reason::subsumed, {}, now);
  for (const auto& task : p.plan.to_acknowledge)
    actions_.notify_checkpoint_complete(task, c.id);
  // Tasks that finished while this one was in progress: the tasks after them wait for a
  // checkpoint taken after their input ended. Without this the job's end waits for the next
  // periodic trigger (up to an interval: 0.3 s of a 0.7 s WordCount at 1 s intervals).
  if (finished_task_waiting_ && pending_.empty())
    trigger_after_finished_task(now);
}

void checkpoint_coordinator::decline(const task_id& task, std::int64_t checkpoint_id,
                                     const std::string& cause, time_ms now, failure_reason reason) {
  auto it = pending_.find(checkpoint_id);
  if (it == pending_.end())
    return;
  // Only a participant can decline: a stale attempt's message (a woken TaskManager's) is not
  // one, whatever checkpoint id it names.
  const auto& participants = it->second.plan.to_acknowledge;
  if (std::find(participants.begin(), participants.end(), task) == participants.end()) {
    log_info("Ignoring the decline of checkpoint " + std::to_string(checkpoint_id) + " by task "
             + task.to_string() + " of job " + job_.to_string() + ": it does not take part.");
    return;
  }
  log_info("Decline checkpoint " + std::to_string(checkpoint_id) + " by task " + task.to_string()
           + " of job " + job_.to_string() + ": " + cause);
  abort(checkpoint_id, reason, cause, now);
}

void checkpoint_coordinator::on_checkpoint_timeout(std::int64_t checkpoint_id, time_ms now) {
  if (pending_.count(checkpoint_id) == 0)
    return; // completed or aborted before its time-out
  log_info("Checkpoint " + std::to_string(checkpoint_id) + " of job " + job_.to_string()
           + " expired before completing.");
  abort(checkpoint_id, failure_reason::expired, {}, now);
}

void checkpoint_coordinator::task_finished(const task_id& task, time_ms now) {
  std::vector<std::int64_t> waiting;
  for (const auto& [id, p] : pending_)
    if (p.not_yet_acknowledged.count(task) != 0)
      waiting.push_back(id);
  for (auto id : waiting)
    decline(task, id, "Task " + task.to_string() + " finished before it acknowledged.", now,
            failure_reason::task_not_ready);
}

void checkpoint_coordinator::trigger_after_finished_task(time_ms now) {
  if (!running_)
    return;
  if (!pending_.empty()
      || (last_completion_ && now < *last_completion_ + settings_.min_pause.count())) {
    finished_task_waiting_ = true;
    return;
  }
  (void)trigger_checkpoint(now); // not all running yet: counted and logged, the periodic one comes
}

void checkpoint_coordinator::abort_pending(failure_reason reason, time_ms now) {
  std::vector<std::int64_t> ids;
  for (const auto& [id, _] : pending_)
    ids.push_back(id);
  for (auto id : ids)
    abort(id, reason, {}, now);
}

void checkpoint_coordinator::abort(std::int64_t checkpoint_id, failure_reason reason,
                                   const std::string& detail, time_ms now) {
  auto it = pending_.find(checkpoint_id);
  if (it == pending_.end())
    return;
  if (auto* r = record(checkpoint_id)) {
    r->status = checkpoint_record::state::failed;
    r->end_time = now;
    r->failure_message = std::string(describe(reason)) + (detail.empty() ? "" : " " + detail);
  }
  auto tasks = std::move(it->second.plan.to_acknowledge);
  auto savepoint = std::move(it->second.savepoint);
  pending_.erase(it);
  if (reason != failure_reason::subsumed)
    ++failed_;
  for (const auto& task : tasks)
    actions_.notify_checkpoint_aborted(task, checkpoint_id);
  if (savepoint) {
    if (savepoint->done)
      savepoint->done(make_error(
        errc::rejected, std::string(describe(reason)) + (detail.empty() ? "" : " " + detail)));
    return; // a failed savepoint does not fail the job (Flink's CheckpointFailureManager)
  }
  if (!counts_as_failure(reason))
    return;
  ++consecutive_failures_;
  if (consecutive_failures_ > settings_.tolerable_failures) {
    auto cause = std::string(
                   "Exceeded checkpoint tolerable failure threshold. The latest "
                   "checkpoint failed due to ")
      + describe(reason) + (detail.empty() ? "" : " (" + detail + ")");
    actions_.fail_job(cause);
  }
}

void checkpoint_coordinator::shutdown(graph::job_status status, time_ms now) {
  stop_scheduler(now);
  bool externalized = settings_.retention != externalized_retention::no_externalized_checkpoints;
  bool keep = (status == graph::job_status::failed && externalized)
    || (status == graph::job_status::canceled
        && settings_.retention == externalized_retention::retain_on_cancellation);
  if (keep) {
    for (const auto& c : retained_)
      if (!c.external_pointer.empty())
        log_info("Retaining checkpoint " + std::to_string(c.id) + " of job " + job_.to_string()
                 + " at " + c.external_pointer + ".");
    return;
  }
  for (const auto& c : retained_)
    actions_.discard_checkpoint(c);
  retained_.clear();
}

const pending_checkpoint* checkpoint_coordinator::pending(std::int64_t checkpoint_id) const {
  auto it = pending_.find(checkpoint_id);
  return it == pending_.end() ? nullptr : &it->second;
}

void checkpoint_coordinator::set_history_size(std::size_t n) {
  history_size_ = n;
  while (history_.size() > history_size_)
    history_.pop_front();
}

checkpoint_record* checkpoint_coordinator::record(std::int64_t checkpoint_id) {
  for (auto i = history_.rbegin(); i != history_.rend(); ++i)
    if (i->id == checkpoint_id)
      return &*i;
  return nullptr;
}

checkpoint_stats checkpoint_coordinator::stats() const {
  checkpoint_stats s;
  s.completed = completed_;
  s.failed = failed_;
  s.in_progress = static_cast<std::int64_t>(pending_.size());
  if (!retained_.empty())
    s.latest_completed = retained_.back();
  return s;
}

void checkpoint_coordinator::log_info(const std::string& text) const {
  if (logger_)
    logger_->info(text);
}

} // namespace flint::job_master::checkpoint
