// The stream task's part in checkpoints (Flink's SubtaskCheckpointCoordinatorImpl): restore at
// start, snapshot at the barrier, the asynchronous write, the acknowledgement, and the
// notifications that let a committing sink finish.

#include "runtime/streaming/stream_task.hpp"

#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/state/keyed_state_files.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <utility>

namespace flint::streaming {

expected<unit> stream_task::restore_state() {
  if (!tdd_.restore)
    return unit{};
  const auto& restored = *tdd_.restore;
  restored_finished_ = restored.state.finished;
  for (std::size_t i = 0; i < operators_.size(); ++i) {
    const auto& id = vertex_->operators[i].id;
    state::operator_subtask_state mine;
    mine.operator_id = id;
    bool present = false;
    for (const auto& op : restored.state.operators)
      if (op.operator_id == id) {
        mine = op;
        present = true;
      }
    try {
      operators_[i]->initialize_state(
        state::operator_state_restore(std::move(mine), restored.state.finished, present));
    } catch (const std::exception& e) {
      return make_error(errc::internal,
                        "task " + tdd_.task_name + " could not restore operator "
                          + vertex_->operators[i].name + " from checkpoint "
                          + std::to_string(restored.checkpoint_id) + ": " + e.what());
    }
  }
  return unit{};
}

bool stream_task::trigger_checkpoint(std::int64_t checkpoint_id, std::int64_t timestamp,
                                     bool stop) {
  network::checkpoint_barrier barrier{checkpoint_id, timestamp};
  if (phase_ == phase::created || phase_ == phase::finished) {
    decline_checkpoint(checkpoint_id, "Task " + tdd_.task_name + " is not running.", true);
    return true;
  }
  if (inputs_ && inputs_->num_gates() > 0 && !input_ended_) {
    // Triggered because every producer finished: their end-of-partition is still on its way.
    // The snapshot belongs after all of their records, so it waits for the input to end.
    if (deferred_trigger_)
      decline_checkpoint(deferred_trigger_->id,
                         "Checkpoint " + std::to_string(deferred_trigger_->id)
                           + " was overtaken by a newer checkpoint.",
                         true);
    deferred_trigger_ = barrier;
    return true;
  }
  const bool stopping = stop && source_ && phase_ == phase::running;
  // A drain runs event time to its end first: windows and timers fire downstream before the
  // barrier reaches them, so the savepoint holds none (Flink's stop --drain).
  if (stopping && std::exchange(drain_on_stop_, false))
    operators_.front()->process_watermark(max_watermark);
  perform_checkpoint(barrier, triggered_metrics(barrier));
  // Stop-with-savepoint: nothing after the savepoint's barrier; the job then finishes. Without
  // drain its event time stops where it is: what waits for later watermarks (windows, timers)
  // stays in the savepoint instead of firing now and again after a resume.
  if (stopping) {
    if (operators_.front()->current_output_watermark() < max_watermark)
      stopping_without_drain_ = true;
    end_input();
    // A source that waited for its own wake-up (a rate limit, a socket) ends now: the next step
    // finishes its partitions.
    has_work_ = true;
  }
  return true;
}

state::checkpoint_metrics stream_task::triggered_metrics(const network::checkpoint_barrier& barrier) {
  // Flink's source tasks: the delay from the trigger, nothing aligned.
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  state::checkpoint_metrics m;
  m.checkpoint_start_delay_nanos = state::start_delay_nanos(now_ms, barrier.timestamp);
  m.alignment_duration_nanos = 0;
  m.bytes_processed_during_alignment = 0;
  m.bytes_persisted_during_alignment = 0;
  return m;
}

state::checkpoint_metrics
stream_task::aligned_metrics(const network::checkpoint_barrier& barrier) const {
  state::checkpoint_metrics m;
  const auto& a = inputs_->last_alignment();
  if (a.checkpoint_id != barrier.id)
    return m;
  m.checkpoint_start_delay_nanos = a.start_delay_nanos;
  m.alignment_duration_nanos = a.alignment_duration_nanos;
  m.bytes_processed_during_alignment = a.bytes_processed;
  m.bytes_persisted_during_alignment = 0; // aligned: nothing in flight is written
  return m;
}

void stream_task::perform_checkpoint(const network::checkpoint_barrier& barrier,
                                     state::checkpoint_metrics metrics) {
  using steady = std::chrono::steady_clock;
  const auto sync_start = steady::now();
  // Flink's checkpointAlignmentTime and checkpointStartDelayNanos gauges: the last checkpoint's.
  if (io_) {
    if (metrics.alignment_duration_nanos >= 0)
      io_->checkpoint_alignment_time.store(metrics.alignment_duration_nanos,
                                           std::memory_order_relaxed);
    if (metrics.checkpoint_start_delay_nanos >= 0)
      io_->checkpoint_start_delay_nanos.store(metrics.checkpoint_start_delay_nanos,
                                              std::memory_order_relaxed);
  }
  // Flink's SubtaskCheckpointCoordinator#checkpointState order: the operators' state is copied
  // (the synchronous part), the barrier goes downstream behind every record emitted before it,
  // and the copy is written while the task goes on.
  // First every operator's prepare_snapshot_pre_barrier, head first (what they emit is
  // processed by the operators after them and written before the barrier); savepoints and the
  // final checkpoint take this path too.
  std::vector<state::operator_snapshot> snapshots;
  snapshots.reserve(operators_.size());
  try {
    for (auto& op : operators_)
      op->prepare_snapshot_pre_barrier(barrier.id);
    for (auto& op : operators_)
      snapshots.push_back(op->snapshot_state(barrier.id));
  } catch (const std::exception& e) {
    decline_checkpoint(barrier.id, "Could not snapshot task " + tdd_.task_name + ": " + e.what());
    return;
  }
  for (auto& writer : writers_)
    if (auto ok = writer->broadcast_checkpoint_barrier(barrier); !ok) {
      decline_checkpoint(barrier.id, ok.error().message);
      return;
    }
  if (input_ended_ && !final_checkpoint_)
    final_checkpoint_ = barrier.id;
  // The synchronous part ends with the barrier sent; the asynchronous one begins.
  const auto async_start = steady::now();
  metrics.sync_duration_millis =
    std::chrono::duration_cast<std::chrono::milliseconds>(async_start - sync_start).count();

  std::vector<graph::operator_id> ids;
  for (const auto& op : vertex_->operators)
    ids.push_back(op.id);
  // Keyed state goes to `<job dir>/chk-<n>/<operator>-<subtask>-<attempt>`; without a
  // checkpoint directory it travels inline to the JobMaster.
  std::string dir = tdd_.checkpointing.storage_dir.empty()
    ? std::string()
    : tdd_.checkpointing.storage_dir + "/chk-" + std::to_string(barrier.id);
  auto suffix =
    "-" + std::to_string(tdd_.subtask_index) + "-" + std::to_string(tdd_.attempt_number);
  auto shared_dir = tdd_.checkpointing.storage_dir + "/shared";
  auto upload = [snapshots = std::move(snapshots), ids = std::move(ids), dir, shared_dir, suffix,
                 finished = input_ended_]() -> expected<state::task_state_snapshot> {
    state::task_state_snapshot task;
    task.finished = finished;
    for (const auto& snapshot : snapshots)
      if (snapshot.before_acknowledge)
        if (auto done = snapshot.before_acknowledge(); !done)
          return done.error();
    for (std::size_t i = 0; i < snapshots.size(); ++i) {
      auto& op = task.operators.emplace_back();
      op.operator_id = ids[i];
      op.list_entries = snapshots[i].list_entries;
      if (snapshots[i].keyed_upload) {
        state::snapshot_target target{dir, dir.empty() ? std::string() : shared_dir,
                                      ids[i].to_string() + suffix};
        auto handles = snapshots[i].keyed_upload(target);
        if (!handles)
          return handles.error();
        op.keyed = std::move(*handles);
        continue;
      }
      if (snapshots[i].key_groups.empty())
        continue;
      auto path = dir.empty() ? std::string() : dir + "/" + ids[i].to_string() + suffix;
      auto handle =
        state::write_keyed_state(path, snapshots[i].first_key_group, snapshots[i].key_groups);
      if (!handle)
        return handle.error();
      op.keyed.push_back(std::move(*handle));
    }
    return task;
  };
  if (dir.empty()) {
    // In memory: nothing to wait for.
    auto snapshot = upload();
    metrics.async_duration_millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - async_start).count();
    if (!snapshot)
      decline_checkpoint(barrier.id, snapshot.error().message);
    else if (context_)
      context_->acknowledge_checkpoint(barrier.id, std::move(*snapshot), metrics);
    return;
  }
  if (!uploader_)
    uploader_ = std::make_unique<snapshot_uploader>(waker());
  uploading_[barrier.id] = {metrics, async_start};
  uploader_->submit(barrier.id, std::move(upload));
}

void stream_task::collect_uploads() {
  for (auto& done : uploader_->take_results()) {
    state::checkpoint_metrics metrics;
    if (auto it = uploading_.find(done.checkpoint_id); it != uploading_.end()) {
      metrics = it->second.first;
      // Until the acknowledgement goes (Flink's asyncDurationMillis).
      metrics.async_duration_millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - it->second.second)
                                        .count();
      uploading_.erase(it);
    }
    if (!done.snapshot)
      decline_checkpoint(done.checkpoint_id,
                         "Could not write the state of task " + tdd_.task_name + " for checkpoint "
                           + std::to_string(done.checkpoint_id) + ": "
                           + done.snapshot.error().message);
    else if (context_)
      context_->acknowledge_checkpoint(done.checkpoint_id, std::move(*done.snapshot), metrics);
  }
}

void stream_task::decline_checkpoint(std::int64_t id, const std::string& cause,
                                     bool task_not_ready) {
  if (context_)
    context_->decline_checkpoint(id, cause, task_not_ready);
}

void stream_task::notify_checkpoint_complete(std::int64_t checkpoint_id) {
  for (auto& op : operators_)
    op->notify_checkpoint_complete(checkpoint_id);
  // The final checkpoint completed — or a savepoint's commit left nothing to wait for.
  if (phase_ == phase::waiting_for_final_checkpoint
      && ((final_checkpoint_ && checkpoint_id >= *final_checkpoint_) || !awaits_commit())) {
    phase_ = phase::ending;
    has_work_ = true;
  }
}

bool stream_task::awaits_commit() const {
  if (tdd_.checkpointing.mode == graph::checkpointing_mode::none || restored_finished_)
    return false;
  return std::any_of(operators_.begin(), operators_.end(),
                     [](const auto& op) { return op->awaits_commit(); });
}

void stream_task::notify_checkpoint_aborted(std::int64_t checkpoint_id) {
  if (inputs_)
    inputs_->cancel_checkpoint(checkpoint_id);
  // final_checkpoint_ stays: any later checkpoint was also taken after the input ended.
  for (auto& op : operators_)
    op->notify_checkpoint_aborted(checkpoint_id);
}

} // namespace flint::streaming
