#include "runtime/rest/rest_json.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <cctype>

#include <nlohmann/json.hpp>

#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/rest/detail/json_parts.hpp"

namespace flint::rest {

namespace detail {

using graph::execution_state;
using graph::job_status;

std::string name(execution_state s) {
  return std::string(graph::to_string(s));
}
std::string name(job_status s) {
  return std::string(graph::to_string(s));
}

std::string task_manager_id(const std::string& endpoint_id) {
  const std::string_view prefix = task_executor::endpoint_prefix;
  return endpoint_id.starts_with(prefix) ? endpoint_id.substr(prefix.size()) : endpoint_id;
}

std::int64_t duration_between(std::int64_t start, std::int64_t end, std::int64_t now_ms) {
  return start < 0 ? -1 : (end >= 0 ? end : now_ms) - start;
}

std::pair<std::int64_t, std::int64_t> vertex_times(const job_master::vertex_status& v) {
  std::int64_t start = -1, end = -1;
  bool all_ended = !v.subtasks.empty();
  for (const auto& t : v.subtasks) {
    if (t.start_time >= 0 && (start < 0 || t.start_time < start))
      start = t.start_time;
    all_ended = all_ended && t.end_time >= 0;
    end = std::max(end, t.end_time);
  }
  return {start, all_ended ? end : -1};
}

json io_metrics(const std::vector<job_master::subtask_status>& subtasks) {
  std::int64_t read_bytes = 0, write_bytes = 0, read_records = 0, write_records = 0;
  std::int64_t backpressured = 0, idle = 0, busy = 0;
  bool complete = !subtasks.empty();
  for (const auto& t : subtasks) {
    read_bytes += t.io.bytes_in_local + t.io.bytes_in_remote;
    write_bytes += t.io.bytes_out;
    read_records += t.io.records_in;
    write_records += t.io.records_out;
    backpressured += t.io.accumulated_back_pressured_ms;
    idle += t.io.accumulated_idle_ms;
    busy += t.io.accumulated_busy_ms;
    complete = complete && t.io_final;
  }
  json m;
  m["read-bytes"] = read_bytes;
  m["read-bytes-complete"] = complete;
  m["write-bytes"] = write_bytes;
  m["write-bytes-complete"] = complete;
  m["read-records"] = read_records;
  m["read-records-complete"] = complete;
  m["write-records"] = write_records;
  m["write-records-complete"] = complete;
  m["accumulated-backpressured-time"] = backpressured;
  m["accumulated-idle-time"] = idle;
  m["accumulated-busy-time"] = static_cast<double>(busy);
  return m;
}

const job_master::vertex_status* find_vertex(const job_view& job, const std::string& id) {
  for (const auto& v : job.report.vertices)
    if (v.id == id)
      return &v;
  return nullptr;
}

json stats_summary(std::vector<std::int64_t> values) {
  json j;
  if (values.empty()) {
    for (const char* k : {"min", "max", "avg"})
      j[k] = 0;
    for (const char* k : {"p50", "p90", "p95", "p99", "p999"})
      j[k] = 0.0;
    return j;
  }
  std::sort(values.begin(), values.end());
  long double sum = 0;
  for (auto v : values)
    sum += v;
  // Flink's DescriptiveStatisticsHistogram percentiles: interpolated between the nearest ranks.
  auto percentile = [&](double p) {
    double pos = p * static_cast<double>(values.size() + 1);
    if (pos < 1)
      return static_cast<double>(values.front());
    if (pos >= static_cast<double>(values.size()))
      return static_cast<double>(values.back());
    auto lower = static_cast<std::size_t>(pos);
    double d = pos - static_cast<double>(lower);
    return static_cast<double>(values[lower - 1])
      + d * static_cast<double>(values[lower] - values[lower - 1]);
  };
  j["min"] = values.front();
  j["max"] = values.back();
  j["avg"] = static_cast<std::int64_t>(sum / static_cast<long double>(values.size()));
  j["p50"] = percentile(0.5);
  j["p90"] = percentile(0.9);
  j["p95"] = percentile(0.95);
  j["p99"] = percentile(0.99);
  j["p999"] = percentile(0.999);
  return j;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    auto comma = text.find(',', from);
    auto item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    auto b = item.find_first_not_of(' ');
    auto e = item.find_last_not_of(' ');
    if (b != std::string::npos)
      out.push_back(item.substr(b, e - b + 1));
    if (comma == std::string::npos)
      break;
    from = comma + 1;
  }
  return out;
}

} // namespace detail

namespace {

using namespace detail;
using graph::execution_state;
using graph::job_status;

/// Flint's version where Flink shows its own.
constexpr const char* flint_version = "0.1.0";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::int64_t duration_of(const dispatcher::job_details& d, std::int64_t now_ms) {
  return (d.end_time_ms >= 0 ? d.end_time_ms : now_ms) - d.start_time_ms;
}

/// Per state, how many subtasks of these vertices are in it.
std::array<std::int64_t, execution_states.size()> subtask_counts(
  const std::vector<job_master::vertex_status>& vertices) {
  std::array<std::int64_t, execution_states.size()> n{};
  for (const auto& v : vertices)
    for (const auto& t : v.subtasks)
      ++n[static_cast<std::size_t>(t.status)];
  return n;
}

json plan_of(const job_view& job) {
  if (job.report.plan.empty())
    return json::object({{"jid", job.details.job_id.to_string()},
                         {"name", job.details.name},
                         {"nodes", json::array()}});
  auto parsed = json::parse(job.report.plan, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json::object() : parsed;
}

} // namespace

execution_state aggregate_state(const job_master::vertex_status& vertex) {
  auto n = subtask_counts({vertex});
  auto has = [&](execution_state s) { return n[static_cast<std::size_t>(s)] > 0; };
  if (has(execution_state::failed))
    return execution_state::failed;
  if (has(execution_state::canceling))
    return execution_state::canceling;
  if (has(execution_state::canceled))
    return execution_state::canceled;
  if (has(execution_state::reconciling))
    return execution_state::reconciling;
  if (has(execution_state::initializing))
    return execution_state::initializing;
  if (has(execution_state::running))
    return execution_state::running;
  if (has(execution_state::finished))
    return n[static_cast<std::size_t>(execution_state::finished)] == vertex.parallelism
      ? execution_state::finished
      : execution_state::running;
  if (has(execution_state::deploying))
    return execution_state::deploying;
  if (has(execution_state::scheduled))
    return execution_state::scheduled;
  return execution_state::created;
}

std::string errors_json(const std::string& message) {
  return json{{"errors", json::array({message})}}.dump();
}

std::string dashboard_config_json(bool web_submit, bool web_cancel,
                                  std::int64_t refresh_interval_ms) {
  json j;
  j["refresh-interval"] = refresh_interval_ms;
  j["timezone-name"] = "Coordinated Universal Time";
  j["timezone-offset"] = 0;
  j["flink-version"] = flint_version;
  j["flink-revision"] = "flint";
  j["features"] = {{"web-submit", web_submit}, {"web-cancel", web_cancel}, {"web-history", false}};
  return j.dump();
}

std::string cluster_overview_json(const dispatcher::job_list& jobs,
                                  const resource_manager::resource_overview& resources) {
  std::int64_t running = 0, finished = 0, cancelled = 0, failed = 0;
  for (const auto& j : jobs.jobs) {
    switch (j.status) {
      case job_status::finished: ++finished; break;
      case job_status::canceled: ++cancelled; break;
      case job_status::failed: ++failed; break;
      default: ++running;
    }
  }
  json j;
  j["taskmanagers"] = resources.number_task_managers;
  j["slots-total"] = resources.number_registered_slots;
  j["slots-available"] = resources.number_free_slots;
  // Flint blocks no TaskManager (Flink's blocklist, for speculative execution).
  j["slots-free-and-blocked"] = 0;
  j["taskmanagers-blocked"] = 0;
  j["jobs-running"] = running;
  j["jobs-finished"] = finished;
  j["jobs-cancelled"] = cancelled;
  j["jobs-failed"] = failed;
  j["flink-version"] = flint_version;
  j["flink-commit"] = "flint";
  return j.dump();
}

std::string jobs_json(const dispatcher::job_list& jobs) {
  json list = json::array();
  for (const auto& j : jobs.jobs)
    list.push_back({{"id", j.job_id.to_string()}, {"status", name(j.status)}});
  return json{{"jobs", std::move(list)}}.dump();
}

std::string jobs_overview_json(const std::vector<job_view>& jobs, std::int64_t now_ms) {
  json list = json::array();
  for (const auto& job : jobs) {
    const auto& d = job.details;
    json e;
    e["jid"] = d.job_id.to_string();
    e["name"] = d.name;
    e["start-time"] = d.start_time_ms;
    e["end-time"] = d.end_time_ms;
    e["duration"] = duration_of(d, now_ms);
    e["state"] = name(d.status);
    e["last-modification"] = d.end_time_ms >= 0 ? d.end_time_ms : d.start_time_ms;
    auto n = subtask_counts(job.report.vertices);
    json tasks;
    std::int64_t total = 0;
    for (auto s : execution_states) {
      tasks[lower(graph::to_string(s))] = n[static_cast<std::size_t>(s)];
      total += n[static_cast<std::size_t>(s)];
    }
    // An archived job without vertex figures still has its task count.
    tasks["total"] = total > 0 ? total : d.number_of_tasks;
    e["tasks"] = std::move(tasks);
    list.push_back(std::move(e));
  }
  return json{{"jobs", std::move(list)}}.dump();
}

std::string job_details_json(const job_view& job, std::int64_t now_ms) {
  const auto& d = job.details;
  json j;
  j["jid"] = d.job_id.to_string();
  j["name"] = d.name;
  // Flink's isStoppable is the legacy StoppableFunction's (gone since 1.9): false for every job;
  // stop-with-savepoint (POST /jobs/:id/stop) does not depend on it.
  j["isStoppable"] = false;
  j["state"] = name(d.status);
  j["job-type"] = job.report.job_type.empty() ? std::string("STREAMING") : job.report.job_type;
  j["start-time"] = d.start_time_ms;
  j["end-time"] = d.end_time_ms;
  j["duration"] = duration_of(d, now_ms);
  j["maxParallelism"] = job.report.max_parallelism;
  j["now"] = now_ms;
  // When the job entered each status: the Dispatcher keeps its start and its end.
  json timestamps;
  for (auto s :
       {job_status::initializing, job_status::created, job_status::running, job_status::failing,
        job_status::failed, job_status::cancelling, job_status::canceled, job_status::finished,
        job_status::restarting, job_status::suspended, job_status::reconciling})
    timestamps[name(s)] = 0;
  timestamps[name(job_status::initializing)] = d.start_time_ms;
  timestamps[name(job_status::created)] = d.start_time_ms;
  if (d.status != job_status::initializing && d.status != job_status::created)
    timestamps[name(job_status::running)] = d.start_time_ms;
  if (d.end_time_ms >= 0)
    timestamps[name(d.status)] = d.end_time_ms;
  j["timestamps"] = std::move(timestamps);
  json vertices = json::array();
  std::array<std::int64_t, execution_states.size()> vertex_counts{};
  for (const auto& v : job.report.vertices) {
    auto state = aggregate_state(v);
    ++vertex_counts[static_cast<std::size_t>(state)];
    json vj;
    vj["id"] = v.id;
    vj["name"] = v.name;
    vj["maxParallelism"] = v.max_parallelism;
    vj["parallelism"] = v.parallelism;
    vj["status"] = name(state);
    auto [start, end] = vertex_times(v);
    vj["start-time"] = start;
    vj["end-time"] = end;
    vj["duration"] = duration_between(start, end, now_ms);
    auto n = subtask_counts({v});
    json tasks;
    for (auto s : execution_states)
      tasks[name(s)] = n[static_cast<std::size_t>(s)];
    vj["tasks"] = std::move(tasks);
    vj["metrics"] = io_metrics(v.subtasks);
    vertices.push_back(std::move(vj));
  }
  j["vertices"] = std::move(vertices);
  json counts;
  for (auto s : execution_states)
    counts[name(s)] = vertex_counts[static_cast<std::size_t>(s)];
  j["status-counts"] = std::move(counts);
  j["plan"] = plan_of(job);
  return j.dump();
}

std::string job_plan_json(const job_view& job) {
  return json{{"plan", plan_of(job)}}.dump();
}

std::string job_exceptions_json(const job_view& job) {
  const auto& failures = job.report.failures;
  json j;
  json all = json::array();
  json entries = json::array();
  for (const auto& f : failures) {
    all.push_back({{"exception", f.cause},
                   {"task", f.task},
                   {"location", f.location},
                   {"timestamp", f.timestamp},
                   {"taskManagerId", f.location}});
    auto first_line = f.cause.substr(0, f.cause.find('\n'));
    entries.push_back({{"exceptionName", first_line.substr(0, first_line.find(':'))},
                       {"stacktrace", f.cause},
                       {"timestamp", f.timestamp},
                       {"taskName", f.task.empty() ? json(nullptr) : json(f.task)},
                       {"location", f.location.empty() ? json(nullptr) : json(f.location)},
                       {"taskManagerId", f.location.empty() ? json(nullptr) : json(f.location)},
                       {"failureLabels", json::object()},
                       {"concurrentExceptions", json::array()}});
  }
  // Flink's older fields: the newest failure is the root exception.
  if (failures.empty()) {
    j["root-exception"] = nullptr;
    j["timestamp"] = nullptr;
  } else {
    j["root-exception"] = failures.front().cause;
    j["timestamp"] = failures.front().timestamp;
  }
  j["all-exceptions"] = std::move(all);
  j["truncated"] = false;
  j["exceptionHistory"] = {{"entries", std::move(entries)}, {"truncated", false}};
  return j.dump();
}

std::optional<std::string> vertex_details_json(const job_view& job, const std::string& vertex_id,
                                               std::int64_t now_ms) {
  const auto* v = find_vertex(job, vertex_id);
  if (v == nullptr)
    return std::nullopt;
  json j;
  j["id"] = v->id;
  j["name"] = v->name;
  j["parallelism"] = v->parallelism;
  j["maxParallelism"] = v->max_parallelism;
  j["now"] = now_ms;
  json subtasks = json::array();
  for (const auto& t : v->subtasks)
    subtasks.push_back(subtask_details(t, now_ms));
  j["subtasks"] = std::move(subtasks);
  j["aggregated"] = aggregated(v->subtasks, now_ms);
  return j.dump();
}

namespace {

/// Flink's levels: OK up to 10 % of the time back-pressured, LOW up to 50 %, HIGH above.
const char* backpressure_level(double ratio) {
  return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high";
}

} // namespace

std::optional<std::string> vertex_backpressure_json(const job_view& job,
                                                    const std::string& vertex_id,
                                                    std::int64_t now_ms) {
  for (const auto& v : job.report.vertices) {
    if (v.id != vertex_id)
      continue;
    double worst = 0;
    json subtasks = json::array();
    for (const auto& t : v.subtasks) {
      double ratio = t.io.back_pressured_ms_per_second / 1000.0;
      worst = std::max(worst, ratio);
      subtasks.push_back({{"subtask", t.subtask},
                          {"attempt-number", t.attempt},
                          {"backpressure-level", backpressure_level(ratio)},
                          {"ratio", ratio},
                          {"idleRatio", t.io.idle_ms_per_second / 1000.0},
                          {"busyRatio", t.io.busy_ms_per_second / 1000.0}});
    }
    json j;
    j["status"] = "ok";
    j["backpressure-level"] = backpressure_level(worst);
    j["backpressureLevel"] = backpressure_level(worst);
    j["end-timestamp"] = now_ms;
    j["subtasks"] = std::move(subtasks);
    return j.dump();
  }
  return std::nullopt;
}

namespace {

/// Flink's ResourceProfileInfo of a profile it does not know (ResourceProfile.UNKNOWN): the
/// ResourceManager registers slots by count, not by size.
json unknown_resource() {
  return {{"cpuCores", -1.0},    {"taskHeapMemory", -1}, {"taskOffHeapMemory", -1},
          {"managedMemory", -1}, {"networkMemory", -1},  {"extendedResources", json::object()}};
}

/// Flink's TaskManagerInfo. What the ResourceManager does not report of a TaskExecutor (its
/// hardware, memory layout, last heartbeat) is written as Flink writes an unknown figure.
json task_manager_entry(const resource_manager::task_manager_info& tm) {
  json memory;
  for (const char* k : {"frameworkHeap", "taskHeap", "frameworkOffHeap", "taskOffHeap",
                        "networkMemory", "managedMemory", "jvmMetaspace", "jvmOverhead",
                        "totalFlinkMemory", "totalProcessMemory"})
    memory[k] = -1;
  return {{"id", task_manager_id(tm.resource_id)},
          {"path", tm.address},
          {"dataPort", tm.data_port},
          {"jmxPort", -1},
          {"timeSinceLastHeartbeat", 0},
          {"slotsNumber", tm.slots_number},
          {"freeSlots", tm.free_slots},
          {"totalResource", unknown_resource()},
          {"freeResource", unknown_resource()},
          {"hardware",
           {{"cpuCores", -1}, {"physicalMemory", -1}, {"freeMemory", -1}, {"managedMemory", -1}}},
          {"memoryConfiguration", std::move(memory)},
          {"blocked", false}};
}

} // namespace

std::string task_managers_json(const resource_manager::resource_overview& resources) {
  json list = json::array();
  for (const auto& tm : resources.task_managers)
    list.push_back(task_manager_entry(tm));
  return json{{"taskmanagers", std::move(list)}}.dump();
}

std::optional<std::string> task_manager_json(const resource_manager::resource_overview& resources,
                                             const std::string& id,
                                             const std::vector<job_view>& jobs) {
  for (const auto& tm : resources.task_managers) {
    if (task_manager_id(tm.resource_id) != id)
      continue;
    auto j = task_manager_entry(tm);
    // Its slots by job: with slot sharing a slot holds one subtask of each vertex, so a job
    // holds as many slots here as its widest vertex has subtasks here.
    json slots = json::array();
    for (const auto& job : jobs) {
      std::int64_t held = 0;
      for (const auto& v : job.report.vertices)
        held = std::max<std::int64_t>(
          held, std::count_if(v.subtasks.begin(), v.subtasks.end(), [&](const auto& t) {
            return task_manager_id(t.task_manager) == id && !graph::is_terminal(t.status);
          }));
      for (std::int64_t i = 0; i < held; ++i)
        slots.push_back(
          {{"jobId", job.details.job_id.to_string()}, {"resource", unknown_resource()}});
    }
    j["allocatedSlots"] = std::move(slots);
    // Flink's TaskManagerMetricsInfo reads JVM figures; a metric it has not received is 0.
    json metrics;
    for (const char* k :
         {"heapUsed", "heapCommitted", "heapMax", "nonHeapUsed", "nonHeapCommitted", "nonHeapMax",
          "directCount", "directUsed", "directMax", "mappedCount", "mappedUsed", "mappedMax",
          "memorySegmentsAvailable", "memorySegmentsTotal", "nettyShuffleMemorySegmentsAvailable",
          "nettyShuffleMemorySegmentsUsed", "nettyShuffleMemorySegmentsTotal",
          "nettyShuffleMemoryAvailable", "nettyShuffleMemoryUsed", "nettyShuffleMemoryTotal"})
      metrics[k] = 0;
    metrics["garbageCollectors"] = json::array();
    j["metrics"] = std::move(metrics);
    return j.dump();
  }
  return std::nullopt;
}

std::string key_values_json(const std::vector<std::pair<std::string, std::string>>& entries) {
  json list = json::array();
  for (const auto& [k, v] : entries)
    list.push_back({{"key", k}, {"value", v}});
  return list.dump();
}

std::string trace_json(const trace::fetch_trace_response& page) {
  std::string out = "{\"records\":[";
  for (std::size_t i = 0; i < page.records.size(); ++i) {
    if (i > 0)
      out += ',';
    out += trace::to_json(page.records[i]);
  }
  out += "],\"missed\":" + std::to_string(page.missed) + ",\"next_sequence\":"
    + std::to_string(page.next_sequence) + ",\"recorded\":" + std::to_string(page.recorded) + "}";
  return out;
}

std::optional<std::string> vertex_watermarks_json(const job_view& job, const std::string& vertex) {
  const auto* v = detail::find_vertex(job, vertex);
  if (v == nullptr)
    return std::nullopt;
  json out = json::array();
  for (const auto& s : v->subtasks)
    out.push_back({{"id", std::to_string(s.subtask) + ".currentInputWatermark"},
                   {"value", std::to_string(s.io.input_watermark)}});
  return out.dump();
}

std::string job_why_json(const job_view& job,
                         const std::optional<resource_manager::resource_overview>& resources,
                         const std::vector<trace::record>& recent, std::int64_t now_ms,
                         std::int64_t heartbeat_interval_ms) {
  const auto& r = job.report;
  const auto jid = job.details.job_id.to_string();
  json reasons = json::array();
  if (job.details.status != job_status::running)
    reasons.push_back("The job is " + name(job.details.status) + ".");
  if (r.tasks_running < r.tasks)
    reasons.push_back(std::to_string(r.tasks - r.tasks_running) + " of " + std::to_string(r.tasks)
                      + " tasks are not running.");
  if (!r.pending_slot_requests.empty()) {
    std::int64_t oldest = 0;
    for (const auto& p : r.pending_slot_requests)
      oldest = std::max(oldest, p.age_ms);
    reasons.push_back(std::to_string(r.pending_slot_requests.size())
                      + " slot request(s) wait for a slot, the oldest for "
                      + std::to_string(oldest / 1000) + " s.");
    if (resources)
      reasons.push_back("The ResourceManager has " + std::to_string(resources->number_free_slots)
                        + " free slot(s) of " + std::to_string(resources->number_registered_slots)
                        + " on " + std::to_string(resources->number_task_managers)
                        + " TaskManager(s); the job needs " + std::to_string(r.slots_needed)
                        + " and holds " + std::to_string(r.slots_assigned) + ".");
  }
  if (resources && resources->number_task_managers == 0)
    reasons.push_back("No TaskManager is registered at the ResourceManager.");
  auto of_job = [&](const trace::record& rec) {
    return rec.from.find(jid) != std::string::npos || rec.to.find(jid) != std::string::npos;
  };
  // The job's refused or failed calls, newest first, as the callers saw them.
  json refused = json::array();
  for (auto i = recent.rbegin(); i != recent.rend() && refused.size() < 10; ++i)
    if (i->result != trace::outcome::ok && of_job(*i)
        && (i->dir == trace::direction::response || i->dir == trace::direction::receive))
      refused.push_back(json::parse(trace::to_json(*i)));
  if (!refused.empty())
    reasons.push_back(std::to_string(refused.size())
                      + " recent call(s) of the job were refused or failed; the newest: "
                      + refused[0]["method"].get<std::string>() + " "
                      + refused[0]["from"].get<std::string>() + " -> "
                      + refused[0]["to"].get<std::string>() + " ("
                      + refused[0]["outcome"].get<std::string>() + ").");
  // The last answered heartbeat per peer of the job.
  std::map<std::string, std::int64_t> last_heard;
  for (const auto& rec : recent) {
    if (rec.method.find("heartbeat") == std::string::npos || !of_job(rec))
      continue;
    const auto& peer = rec.from.find(jid) != std::string::npos ? rec.to : rec.from;
    auto& t = last_heard[peer];
    if (rec.result == trace::outcome::ok && rec.dir != trace::direction::send)
      t = std::max(t, rec.time_us / 1000);
  }
  json overdue = json::array();
  for (const auto& [peer, at] : last_heard) {
    auto ago = at > 0 ? now_ms - at : -1;
    if (at == 0 || ago > 2 * heartbeat_interval_ms)
      overdue.push_back({{"target", peer}, {"last-ms-ago", ago}});
  }
  if (!overdue.empty())
    reasons.push_back(std::to_string(overdue.size())
                      + " heartbeat target(s) of the job are overdue.");
  // Event time: each vertex's lowest input watermark and the input channel holding it back, so a
  // window that does not fire can be explained (an idle or slow producer subtask).
  json watermarks = json::array();
  for (const auto& v : r.vertices) {
    std::optional<std::int64_t> low;
    const job_master::subtask_status* lowest = nullptr;
    std::int32_t idle = 0;
    for (const auto& s : v.subtasks) {
      if (s.io.input_idle)
        ++idle;
      if (!low || s.io.input_watermark < *low) {
        low = s.io.input_watermark;
        lowest = &s;
      }
    }
    if (!low || v.subtasks.empty())
      continue;
    json entry{{"vertex", v.name},
               {"low-watermark", std::to_string(*low)},
               {"idle-subtasks", idle},
               {"subtasks", v.subtasks.size()}};
    if (lowest != nullptr) {
      entry["lowest-subtask"] = lowest->subtask;
      entry["held-back-by"] = lowest->io.watermark_held_back_by;
    }
    std::int64_t late = 0;
    for (const auto& s : v.subtasks)
      late += s.io.late_records_dropped;
    entry["late-records-dropped"] = late;
    watermarks.push_back(std::move(entry));
  }
  json pending = json::array();
  for (const auto& p : r.pending_slot_requests)
    pending.push_back({{"request", p.request}, {"age-ms", p.age_ms}});
  json j;
  j["jid"] = jid;
  j["state"] = name(job.details.status);
  j["reasons"] = std::move(reasons);
  j["tasks"] = r.tasks;
  j["tasks-running"] = r.tasks_running;
  j["slots-needed"] = r.slots_needed;
  j["slots-assigned"] = r.slots_assigned;
  j["registered-taskmanagers"] = r.registered_task_managers;
  j["pending-slot-requests"] = std::move(pending);
  j["refused-calls"] = std::move(refused);
  j["overdue-heartbeats"] = std::move(overdue);
  j["watermarks"] = std::move(watermarks);
  return j.dump();
}

} // namespace flint::rest
