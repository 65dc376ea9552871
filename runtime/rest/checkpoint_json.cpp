// Flink's checkpoint statistics (its CheckpointingStatistics, CheckpointStatistics,
// TaskCheckpointStatistics and CheckpointConfigInfo) from the JobMaster's checkpoint history.
// A subtask's figures (its start delay, alignment, processed and persisted bytes, the sync and
// async parts) are what its acknowledgement carried (Flink's CheckpointMetrics); a figure it did
// not send (an older sender) is -1 there and left out of sums and summaries, as Flink's
// StatsSummary leaves out negative values. alignment_buffered is 0, as in Flink since aligned
// checkpoints stopped buffering.

#include <algorithm>
#include <limits>
#include <map>

#include "runtime/rest/detail/json_parts.hpp"

namespace flint::rest {

namespace {

using namespace detail;
using entry = job_master::checkpoint_entry;

bool is_completed(const entry& e) {
  return e.status == "COMPLETED";
}
bool is_failed(const entry& e) {
  return e.status == "FAILED";
}

/// Flink's className: "completed", "failed" or "in_progress".
std::string class_name(const entry& e) {
  return is_completed(e) ? "completed" : is_failed(e) ? "failed" : "in_progress";
}

std::int64_t latest_ack(const std::vector<job_master::checkpoint_task>& tasks) {
  std::int64_t latest = -1;
  for (const auto& t : tasks)
    latest = std::max(latest, t.ack_time);
  return latest;
}

/// Flink's SubtaskStateStats keep milliseconds: -1 stays unknown.
std::int64_t millis_of(std::int64_t nanos) {
  return nanos < 0 ? -1 : nanos / 1'000'000;
}

bool acknowledged(const job_master::checkpoint_task& t) {
  return t.ack_time >= 0;
}

/// The processed and persisted bytes of the acknowledged tasks of `e` for which `pick` holds.
template <class Pick>
std::pair<std::int64_t, std::int64_t> data_of(const entry& e, Pick pick) {
  // The counts come from the subtasks' acknowledgements: a sum saturates rather than overflow.
  auto add = [](std::int64_t sum, std::int64_t n) {
    std::int64_t out = 0;
    return __builtin_add_overflow(sum, std::max<std::int64_t>(0, n), &out)
      ? std::numeric_limits<std::int64_t>::max()
      : out;
  };
  std::int64_t processed = 0, persisted = 0;
  for (const auto& t : e.tasks)
    if (acknowledged(t) && pick(t)) {
      processed = add(processed, t.metrics.bytes_processed_during_alignment);
      persisted = add(persisted, t.metrics.bytes_persisted_during_alignment);
    }
  return {processed, persisted};
}

/// Flink's end_to_end_duration: from the trigger to the latest acknowledgement (to the end for a
/// completed one); -1 before any.
std::int64_t end_to_end(const entry& e) {
  if (is_completed(e) && e.end_time >= 0)
    return e.end_time - e.trigger_time;
  auto ack = latest_ack(e.tasks);
  return ack < 0 ? -1 : ack - e.trigger_time;
}

/// The vertices taking part, in the order they first appear.
std::vector<std::string> vertices_of(const entry& e) {
  std::vector<std::string> out;
  for (const auto& t : e.tasks)
    if (std::find(out.begin(), out.end(), t.vertex) == out.end())
      out.push_back(t.vertex);
  return out;
}

/// Flink's TaskCheckpointStatistics of one vertex in checkpoint `e`.
json task_statistics(const entry& e, const std::string& vertex) {
  std::int32_t subtasks = 0, acknowledged = 0;
  std::uint64_t bytes = 0;
  std::int64_t ack = -1;
  for (const auto& t : e.tasks) {
    if (t.vertex != vertex)
      continue;
    ++subtasks;
    if (t.ack_time >= 0) {
      ++acknowledged;
      bytes += t.state_bytes;
      ack = std::max(ack, t.ack_time);
    }
  }
  json j;
  j["id"] = e.id;
  j["status"] = e.status;
  j["latest_ack_timestamp"] = ack;
  j["checkpointed_size"] = bytes;
  j["state_size"] = bytes;
  j["end_to_end_duration"] = ack < 0 ? -1 : ack - e.trigger_time;
  auto [processed, persisted] =
    data_of(e, [&](const job_master::checkpoint_task& t) { return t.vertex == vertex; });
  j["alignment_buffered"] = 0;
  j["processed_data"] = processed;
  j["persisted_data"] = persisted;
  j["num_subtasks"] = subtasks;
  j["num_acknowledged_subtasks"] = acknowledged;
  return j;
}

/// Flink's CheckpointStatistics (completed, failed or pending) of one entry.
json checkpoint_statistics(const entry& e) {
  json j;
  j["className"] = class_name(e);
  j["id"] = e.id;
  j["status"] = e.status;
  j["is_savepoint"] = e.savepoint;
  j["savepointFormat"] = e.savepoint ? json("CANONICAL") : json(nullptr);
  j["trigger_timestamp"] = e.trigger_time;
  j["latest_ack_timestamp"] = latest_ack(e.tasks);
  j["state_size"] = e.state_bytes;
  j["checkpointed_size"] = e.state_bytes;
  j["end_to_end_duration"] = end_to_end(e);
  auto [processed, persisted] = data_of(e, [](const auto&) { return true; });
  j["alignment_buffered"] = 0;
  j["processed_data"] = processed;
  j["persisted_data"] = persisted;
  j["num_subtasks"] = e.tasks.size();
  j["num_acknowledged_subtasks"] =
    std::count_if(e.tasks.begin(), e.tasks.end(), [](const auto& t) { return t.ack_time >= 0; });
  j["checkpoint_type"] = !e.savepoint ? "CHECKPOINT" : e.stop ? "SYNC_SAVEPOINT" : "SAVEPOINT";
  json tasks = json::object();
  for (const auto& v : vertices_of(e))
    tasks[v] = task_statistics(e, v);
  j["tasks"] = std::move(tasks);
  if (is_completed(e)) {
    j["external_path"] = e.external_path;
    j["discarded"] = false;
  }
  if (is_failed(e)) {
    j["failure_timestamp"] = e.end_time;
    j["failure_message"] = e.failure_message;
  }
  return j;
}

const entry* find_entry(const job_view& job, std::int64_t id) {
  for (const auto& e : job.report.checkpoint_history)
    if (e.id == id)
      return &e;
  return nullptr;
}

/// The newest entry of the history for which `pick` holds.
template <class Pick>
const entry* newest(const job_view& job, Pick pick) {
  const auto& h = job.report.checkpoint_history;
  for (auto i = h.rbegin(); i != h.rend(); ++i)
    if (pick(*i))
      return &*i;
  return nullptr;
}

} // namespace

std::string job_checkpoints_json(const job_view& job, std::size_t history_size) {
  const auto& c = job.report.checkpoints;
  const auto& restored = job.report.restored;
  json j;
  j["counts"] = {{"restored", restored.id >= 0 ? 1 : 0},
                 {"total", c.completed + c.failed + c.in_progress},
                 {"in_progress", c.in_progress},
                 {"completed", c.completed},
                 {"failed", c.failed}};
  // Over the completed checkpoints of the history (Flink's summary covers its own window).
  std::vector<std::int64_t> sizes, durations, zeros, processed, persisted;
  for (const auto& e : job.report.checkpoint_history)
    if (is_completed(e)) {
      sizes.push_back(static_cast<std::int64_t>(e.state_bytes));
      durations.push_back(end_to_end(e));
      zeros.push_back(0);
      auto data = data_of(e, [](const auto&) { return true; });
      processed.push_back(data.first);
      persisted.push_back(data.second);
    }
  j["summary"] = {{"checkpointed_size", stats_summary(sizes)},
                  {"state_size", stats_summary(sizes)},
                  {"end_to_end_duration", stats_summary(durations)},
                  {"alignment_buffered", stats_summary(zeros)},
                  {"processed_data", stats_summary(processed)},
                  {"persisted_data", stats_summary(persisted)}};
  json latest;
  if (auto* e = newest(job, [](const entry& e) { return is_completed(e) && !e.savepoint; }))
    latest["completed"] = checkpoint_statistics(*e);
  else if (c.latest_id > 0)
    // Completed before the history's window (or recovered): what the counts keep of it.
    latest["completed"] = {{"className", "completed"},
                           {"id", c.latest_id},
                           {"status", "COMPLETED"},
                           {"is_savepoint", false},
                           {"savepointFormat", nullptr},
                           {"trigger_timestamp", -1},
                           {"latest_ack_timestamp", -1},
                           {"state_size", c.latest_state_bytes},
                           {"checkpointed_size", c.latest_state_bytes},
                           {"end_to_end_duration", c.latest_duration_ms},
                           {"alignment_buffered", 0},
                           {"processed_data", 0},
                           {"persisted_data", 0},
                           {"num_subtasks", 0},
                           {"num_acknowledged_subtasks", 0},
                           {"checkpoint_type", "CHECKPOINT"},
                           {"tasks", json::object()},
                           {"external_path", c.latest_external_path},
                           {"discarded", false}};
  else
    latest["completed"] = nullptr;
  auto* savepoint = newest(job, [](const entry& e) { return is_completed(e) && e.savepoint; });
  latest["savepoint"] = savepoint ? checkpoint_statistics(*savepoint) : json(nullptr);
  auto* failed = newest(job, is_failed);
  latest["failed"] = failed ? checkpoint_statistics(*failed) : json(nullptr);
  if (restored.id >= 0)
    latest["restored"] = {{"id", restored.id},
                          {"restore_timestamp", restored.restore_time},
                          {"is_savepoint", restored.savepoint},
                          {"external_path", restored.external_path}};
  else
    latest["restored"] = nullptr;
  j["latest"] = std::move(latest);
  json history = json::array();
  const auto& h = job.report.checkpoint_history;
  for (auto i = h.rbegin(); i != h.rend() && history.size() < history_size; ++i)
    history.push_back(checkpoint_statistics(*i));
  j["history"] = std::move(history);
  return j.dump();
}

std::optional<std::string> checkpoint_config_json(const job_view& job) {
  if (!job.report.checkpointing)
    return std::nullopt;
  const auto& c = job.report.checkpoint_config;
  json j;
  j["mode"] = c.mode == "AT_LEAST_ONCE" ? "at_least_once" : "exactly_once";
  // Flink's interval of a job without periodic checkpoints.
  j["interval"] = c.interval_ms > 0 ? c.interval_ms : std::numeric_limits<std::int64_t>::max();
  j["timeout"] = c.timeout_ms;
  j["min_pause"] = c.min_pause_ms;
  j["max_concurrent"] = c.max_concurrent;
  j["externalization"] = {{"enabled", c.retention != "NO_EXTERNALIZED_CHECKPOINTS"},
                          {"delete_on_cancellation", c.retention != "RETAIN_ON_CANCELLATION"}};
  j["state_backend"] =
    c.state_backend == "rocksdb" ? "EmbeddedRocksDBStateBackend" : "HashMapStateBackend";
  j["checkpoint_storage"] =
    c.checkpoint_storage.empty() ? "JobManagerCheckpointStorage" : "FileSystemCheckpointStorage";
  j["unaligned_checkpoints"] = false;
  j["tolerable_failed_checkpoints"] = c.tolerable_failures;
  j["aligned_checkpoint_timeout"] = 0;
  j["checkpoints_after_tasks_finish"] = true;
  j["state_changelog_enabled"] = false;
  j["changelog_periodic_materialization_interval"] = -1;
  j["changelog_storage"] = "";
  return j.dump();
}

std::optional<std::string> checkpoint_details_json(const job_view& job, std::int64_t id) {
  const auto* e = find_entry(job, id);
  if (e == nullptr)
    return std::nullopt;
  return checkpoint_statistics(*e).dump();
}

std::optional<std::string> checkpoint_subtasks_json(const job_view& job, std::int64_t id,
                                                    const std::string& vertex_id) {
  const auto* e = find_entry(job, id);
  if (e == nullptr)
    return std::nullopt;
  std::vector<const job_master::checkpoint_task*> tasks;
  for (const auto& t : e->tasks)
    if (t.vertex == vertex_id)
      tasks.push_back(&t);
  if (tasks.empty())
    return std::nullopt;
  std::sort(tasks.begin(), tasks.end(),
            [](const auto* a, const auto* b) { return a->subtask < b->subtask; });
  auto j = task_statistics(*e, vertex_id);
  std::vector<std::int64_t> sizes, durations, zeros, sync, async, processed, persisted, alignment,
    start_delay;
  // Flink's StatsSummary: a figure a subtask did not measure (-1) is left out.
  auto known = [](std::vector<std::int64_t>& into, std::int64_t v) {
    if (v >= 0)
      into.push_back(v);
  };
  json subtasks = json::array();
  for (const auto* t : tasks) {
    json s;
    s["index"] = t->subtask;
    if (t->ack_time < 0) {
      s["status"] = "pending_or_failed";
      s["className"] = "pending";
      subtasks.push_back(std::move(s));
      continue;
    }
    auto duration = t->ack_time - e->trigger_time;
    sizes.push_back(static_cast<std::int64_t>(t->state_bytes));
    durations.push_back(duration);
    s["status"] = "completed";
    s["className"] = "completed";
    s["ack_timestamp"] = t->ack_time;
    s["end_to_end_duration"] = duration;
    s["checkpointed_size"] = t->state_bytes;
    s["state_size"] = t->state_bytes;
    const auto& m = t->metrics;
    auto alignment_ms = millis_of(m.alignment_duration_nanos);
    auto start_delay_ms = millis_of(m.checkpoint_start_delay_nanos);
    zeros.push_back(0);
    known(sync, m.sync_duration_millis);
    known(async, m.async_duration_millis);
    known(processed, m.bytes_processed_during_alignment);
    known(persisted, m.bytes_persisted_during_alignment);
    known(alignment, alignment_ms);
    known(start_delay, start_delay_ms);
    s["checkpoint"] = {{"sync", m.sync_duration_millis}, {"async", m.async_duration_millis}};
    s["alignment"] = {{"buffered", 0},
                      {"processed", m.bytes_processed_during_alignment},
                      {"persisted", m.bytes_persisted_during_alignment},
                      {"duration", alignment_ms}};
    s["start_delay"] = start_delay_ms;
    s["unaligned_checkpoint"] = false;
    s["aborted"] = false;
    subtasks.push_back(std::move(s));
  }
  j["summary"] = {
    {"checkpointed_size", stats_summary(sizes)},
    {"state_size", stats_summary(sizes)},
    {"end_to_end_duration", stats_summary(durations)},
    {"checkpoint_duration", {{"sync", stats_summary(sync)}, {"async", stats_summary(async)}}},
    {"alignment",
     {{"buffered", stats_summary(zeros)},
      {"processed", stats_summary(processed)},
      {"persisted", stats_summary(persisted)},
      {"duration", stats_summary(alignment)}}},
    {"start_delay", stats_summary(start_delay)}};
  j["subtasks"] = std::move(subtasks);
  return j.dump();
}

} // namespace flint::rest
