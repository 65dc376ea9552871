// Flink's answers about one vertex beyond its details: a subtask, the subtasks' times, the
// TaskManagers it runs on, its accumulators and metrics, all from the job's status report (the
// figures each TaskExecutor sends its JobMaster).

#include <algorithm>
#include <map>

#include "runtime/rest/detail/json_parts.hpp"

namespace flint::rest {

namespace detail {

/// One subtask's figures under Flink's task metric names.
std::vector<std::pair<std::string, json>> task_metrics(const job_master::subtask_status& t) {
  const auto& io = t.io;
  return {{"numRecordsIn", io.records_in},
          {"numRecordsOut", io.records_out},
          {"numBytesIn", io.bytes_in_local + io.bytes_in_remote},
          {"numBytesOut", io.bytes_out},
          {"numBuffersOut", io.buffers_out},
          {"busyTimeMsPerSecond", io.busy_ms_per_second},
          {"idleTimeMsPerSecond", io.idle_ms_per_second},
          {"backPressuredTimeMsPerSecond", io.back_pressured_ms_per_second},
          {"accumulatedBusyTime", io.accumulated_busy_ms},
          {"accumulatedIdleTime", io.accumulated_idle_ms},
          {"accumulatedBackPressuredTime", io.accumulated_back_pressured_ms},
          {"checkpointAlignmentTime", io.checkpoint_alignment_time},
          {"checkpointStartDelayNanos", io.checkpoint_start_delay_nanos}};
}

/// Flink's MetricsAggregationParameter statistics of `values`: min, max, avg, sum, median and
/// the 25th, 75th and 95th percentiles.
json aggregate(std::vector<double> values) {
  json j;
  if (values.empty()) {
    for (const char* k : {"min", "max", "avg", "sum", "median", "p25", "p75", "p95"})
      j[k] = 0;
    return j;
  }
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (auto v : values)
    sum += v;
  auto at = [&](double p) {
    auto i = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
    return values[std::min(i, values.size() - 1)];
  };
  auto whole = [](double v) { return static_cast<std::int64_t>(v); };
  j["min"] = whole(values.front());
  j["max"] = whole(values.back());
  j["avg"] = whole(sum / static_cast<double>(values.size()));
  j["sum"] = whole(sum);
  j["median"] = whole(at(0.5));
  j["p25"] = whole(at(0.25));
  j["p75"] = whole(at(0.75));
  j["p95"] = whole(at(0.95));
  return j;
}

/// How long the subtask spent in each state before it ended (Flink's status-duration). Flint's
/// scheduler keeps when an attempt went DEPLOYING and when it ended, not when it went
/// INITIALIZING or RUNNING: a phase it cannot measure is -1, as Flink writes a state without
/// timestamps.
json status_duration(const job_master::subtask_status& t, std::int64_t now_ms) {
  json j;
  for (const char* s : {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"})
    j[s] = -1;
  if (t.status == graph::execution_state::deploying && t.start_time >= 0)
    j["DEPLOYING"] = now_ms - t.start_time;
  return j;
}

/// Flink's AggregatedTaskDetailsInfo of subtasks.
json aggregated(const std::vector<job_master::subtask_status>& subtasks, std::int64_t now_ms) {
  std::map<std::string, std::vector<double>> figures;
  for (const auto& t : subtasks) {
    auto m = io_metrics({t});
    for (const char* k :
         {"read-bytes", "write-bytes", "read-records", "write-records",
          "accumulated-backpressured-time", "accumulated-idle-time", "accumulated-busy-time"})
      figures[k].push_back(m[k].get<double>());
  }
  json metrics;
  for (const char* k :
       {"read-bytes", "write-bytes", "read-records", "write-records",
        "accumulated-backpressured-time", "accumulated-idle-time", "accumulated-busy-time"})
    metrics[k] = aggregate(figures[k]);
  json durations;
  for (const char* s : {"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING"}) {
    std::vector<double> known;
    for (const auto& t : subtasks) {
      auto d = status_duration(t, now_ms)[s].get<std::int64_t>();
      if (d >= 0)
        known.push_back(static_cast<double>(d));
    }
    durations[s] = aggregate(known);
  }
  return {{"metrics", std::move(metrics)}, {"status-duration", std::move(durations)}};
}

json subtask_details(const job_master::subtask_status& t, std::int64_t now_ms) {
  json j;
  j["subtask"] = t.subtask;
  j["status"] = name(t.status);
  j["attempt"] = t.attempt;
  j["host"] = t.host.empty() ? std::string("(unassigned)") : t.host;
  j["start-time"] = t.start_time;
  j["end-time"] = t.end_time;
  j["duration"] = duration_between(t.start_time, t.end_time, now_ms);
  j["metrics"] = io_metrics({t});
  j["taskmanager-id"] =
    t.task_manager.empty() ? std::string("(unassigned)") : task_manager_id(t.task_manager);
  j["status-duration"] = status_duration(t, now_ms);
  return j;
}

} // namespace detail

namespace {

using namespace detail;

std::string metric_value(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

} // namespace

std::optional<std::string> subtask_details_json(const job_view& job, const std::string& vertex_id,
                                                std::int32_t subtask, std::int64_t now_ms) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  for (const auto& t : v->subtasks)
    if (t.subtask == subtask)
      return subtask_details(t, now_ms).dump();
  return std::nullopt;
}

std::optional<std::string> subtask_times_json(const job_view& job, const std::string& vertex_id,
                                              std::int64_t now_ms) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  json subtasks = json::array();
  for (const auto& t : v->subtasks) {
    // When it entered each state; 0 for a state it did not reach or whose time Flint does not
    // keep (only DEPLOYING and the end are kept), as Flink writes an unset state timestamp.
    json timestamps;
    for (auto s : execution_states)
      timestamps[name(s)] = 0;
    if (t.start_time >= 0)
      timestamps[name(graph::execution_state::deploying)] = t.start_time;
    if (t.end_time >= 0 && graph::is_terminal(t.status))
      timestamps[name(t.status)] = t.end_time;
    subtasks.push_back({{"subtask", t.subtask},
                        {"host", t.host.empty() ? std::string("(unassigned)") : t.host},
                        {"duration", duration_between(t.start_time, t.end_time, now_ms)},
                        {"timestamps", std::move(timestamps)}});
  }
  json j;
  j["id"] = v->id;
  j["name"] = v->name;
  j["now"] = now_ms;
  j["subtasks"] = std::move(subtasks);
  return j.dump();
}

std::optional<std::string> vertex_task_managers_json(const job_view& job,
                                                     const std::string& vertex_id,
                                                     std::int64_t now_ms) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  // By TaskManager, in the order of their first subtask.
  std::vector<std::string> order;
  std::map<std::string, job_master::vertex_status> by_tm;
  for (const auto& t : v->subtasks) {
    auto& group = by_tm[t.task_manager];
    if (group.subtasks.empty())
      order.push_back(t.task_manager);
    group.subtasks.push_back(t);
    ++group.parallelism;
  }
  json tms = json::array();
  for (const auto& tm : order) {
    const auto& group = by_tm[tm];
    const auto& first = group.subtasks.front();
    auto [start, end] = vertex_times(group);
    json counts;
    for (auto s : execution_states)
      counts[name(s)] = std::count_if(group.subtasks.begin(), group.subtasks.end(),
                                      [s](const auto& t) { return t.status == s; });
    json e;
    e["host"] = first.host.empty() ? std::string("(unassigned)") : first.host;
    e["taskmanager-id"] = tm.empty() ? std::string("(unassigned)") : task_manager_id(tm);
    e["status"] = name(aggregate_state(group));
    e["start-time"] = start;
    e["end-time"] = end;
    e["duration"] = duration_between(start, end, now_ms);
    e["metrics"] = io_metrics(group.subtasks);
    e["status-counts"] = std::move(counts);
    e["aggregated"] = aggregated(group.subtasks, now_ms);
    tms.push_back(std::move(e));
  }
  json j;
  j["id"] = v->id;
  j["name"] = v->name;
  j["now"] = now_ms;
  j["taskmanagers"] = std::move(tms);
  return j.dump();
}

std::optional<std::string> vertex_accumulators_json(const job_view& job,
                                                    const std::string& vertex_id) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  return json{{"id", v->id}, {"user-accumulators", json::array()}}.dump();
}

std::optional<std::string> subtasks_accumulators_json(const job_view& job,
                                                      const std::string& vertex_id) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  json subtasks = json::array();
  for (const auto& t : v->subtasks)
    subtasks.push_back({{"subtask", t.subtask},
                        {"attempt", t.attempt},
                        {"host", t.host.empty() ? std::string("(unassigned)") : t.host},
                        {"user-accumulators", json::array()}});
  return json{{"id", v->id}, {"parallelism", v->parallelism}, {"subtasks", std::move(subtasks)}}
    .dump();
}

std::optional<std::string> vertex_metrics_json(const job_view& job, const std::string& vertex_id,
                                               const std::optional<std::string>& get) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto& t : v->subtasks)
    for (const auto& [id, value] : task_metrics(t))
      all.emplace_back(std::to_string(t.subtask) + "." + id, metric_value(value));
  return metric_list_json(all, get);
}

std::optional<std::string> subtasks_metrics_json(const job_view& job, const std::string& vertex_id,
                                                 const std::optional<std::string>& get,
                                                 const std::optional<std::string>& agg,
                                                 const std::optional<std::string>& subtasks) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  std::vector<const job_master::subtask_status*> chosen;
  if (subtasks) {
    auto wanted = split_list(*subtasks);
    for (const auto& t : v->subtasks)
      if (std::find(wanted.begin(), wanted.end(), std::to_string(t.subtask)) != wanted.end())
        chosen.push_back(&t);
  } else {
    for (const auto& t : v->subtasks)
      chosen.push_back(&t);
  }
  std::vector<std::string> ids;
  if (!v->subtasks.empty())
    for (const auto& [id, value] : task_metrics(v->subtasks.front()))
      ids.push_back(id);
  json list = json::array();
  if (!get) {
    for (const auto& id : ids)
      list.push_back({{"id", id}});
    return list.dump();
  }
  std::vector<std::string> modes = {"min", "max", "avg", "sum"};
  if (agg)
    modes = split_list(*agg);
  for (auto& m : modes)
    std::transform(m.begin(), m.end(), m.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& want : split_list(*get)) {
    if (std::find(ids.begin(), ids.end(), want) == ids.end() || chosen.empty())
      continue;
    double lo = 0, hi = 0, sum = 0;
    bool first = true;
    for (const auto* t : chosen)
      for (const auto& [id, value] : task_metrics(*t))
        if (id == want) {
          auto x = value.get<double>();
          lo = first ? x : std::min(lo, x);
          hi = first ? x : std::max(hi, x);
          sum += x;
          first = false;
        }
    json e;
    e["id"] = want;
    for (const auto& m : modes) {
      if (m == "min")
        e["min"] = lo;
      else if (m == "max")
        e["max"] = hi;
      else if (m == "avg")
        e["avg"] = sum / static_cast<double>(chosen.size());
      else if (m == "sum")
        e["sum"] = sum;
    }
    list.push_back(std::move(e));
  }
  return list.dump();
}

} // namespace flint::rest
