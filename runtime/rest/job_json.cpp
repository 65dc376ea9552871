// Flink's job-level answers beyond the details: the execution result, the configuration, the
// job's metrics, accumulators and resource requirements.

#include <charconv>

#include "runtime/rest/detail/json_parts.hpp"

namespace flint::rest {

namespace {

using namespace detail;

/// Flink's ApplicationStatus of a job status.
const char* application_status(graph::job_status s) {
  switch (s) {
    case graph::job_status::finished: return "SUCCEEDED";
    case graph::job_status::failed: return "FAILED";
    case graph::job_status::canceled: return "CANCELED";
    default: return "UNKNOWN";
  }
}

std::string value_of(const job_view& job, const std::string& key) {
  for (const auto& e : job.report.job_configuration)
    if (e.key == key)
      return e.value;
  return {};
}

/// The job's metrics Flint keeps (Flink's names of the JobManager's job metrics).
std::vector<std::pair<std::string, std::string>> job_metrics(const job_view& job) {
  const auto& r = job.report;
  std::vector<std::pair<std::string, std::string>> m;
  m.emplace_back("numRestarts", std::to_string(r.restarts));
  m.emplace_back("fullRestarts", std::to_string(r.restarts));
  if (!r.checkpointing)
    return m;
  const auto& c = r.checkpoints;
  m.emplace_back("numberOfCompletedCheckpoints", std::to_string(c.completed));
  m.emplace_back("numberOfFailedCheckpoints", std::to_string(c.failed));
  m.emplace_back("numberOfInProgressCheckpoints", std::to_string(c.in_progress));
  m.emplace_back("totalNumberOfCheckpoints",
                 std::to_string(c.completed + c.failed + c.in_progress));
  if (c.latest_id > 0) {
    m.emplace_back("lastCheckpointSize", std::to_string(c.latest_state_bytes));
    m.emplace_back("lastCheckpointFullSize", std::to_string(c.latest_state_bytes));
    m.emplace_back("lastCheckpointDuration", std::to_string(c.latest_duration_ms));
    m.emplace_back("lastCheckpointExternalPath", c.latest_external_path);
  }
  if (r.restored.id >= 0)
    m.emplace_back("lastCheckpointRestoreTimestamp", std::to_string(r.restored.restore_time));
  return m;
}

} // namespace

std::string job_execution_result_json(const graph::job_id& job,
                                      const std::optional<job_outcome>& outcome) {
  json j;
  if (!outcome) {
    j["status"] = {{"id", "IN_PROGRESS"}};
    return j.dump();
  }
  j["status"] = {{"id", "COMPLETED"}};
  // Flink's JobResultSerializer's names (what RestClusterClient reads), not the spec's.
  json r;
  r["id"] = job.to_string();
  r["application-status"] = application_status(outcome->status);
  r["accumulator-results"] = json::object();
  r["net-runtime"] = outcome->net_runtime_ms;
  if (outcome->status == graph::job_status::failed)
    r["failure-cause"] = {{"class", "org.apache.flink.runtime.JobException"},
                          {"stack-trace", outcome->failure_cause},
                          {"serialized-throwable", nullptr}};
  j["job-execution-result"] = std::move(r);
  return j.dump();
}

std::string job_config_json(const job_view& job) {
  // Flink's JobConfigInfo serializer's names (what the dashboard reads).
  json ec;
  ec["execution-mode"] = job.report.job_type == "BATCH" ? "BATCH" : "PIPELINED";
  auto restart = value_of(job, "restart-strategy.type");
  if (restart.empty())
    restart = value_of(job, "restart-strategy");
  ec["restart-strategy"] =
    restart.empty() ? std::string("Cluster level default restart strategy") : restart;
  // Flink's -1: not set for the job.
  auto text = value_of(job, "parallelism.default");
  int parallelism = -1;
  if (auto [end, ec_] = std::from_chars(text.data(), text.data() + text.size(), parallelism);
      ec_ != std::errc{} || end != text.data() + text.size())
    parallelism = -1;
  ec["job-parallelism"] = parallelism;
  ec["object-reuse-mode"] = false;
  json user = json::object();
  for (const auto& e : job.report.job_configuration)
    user[e.key] = e.value;
  ec["user-config"] = std::move(user);
  json j;
  j["jid"] = job.details.job_id.to_string();
  j["name"] = job.details.name;
  j["execution-config"] = std::move(ec);
  return j.dump();
}

std::string metric_list_json(const std::vector<std::pair<std::string, std::string>>& metrics,
                             const std::optional<std::string>& get) {
  json list = json::array();
  if (!get) {
    for (const auto& [id, value] : metrics)
      list.push_back({{"id", id}});
    return list.dump();
  }
  for (const auto& want : split_list(*get))
    for (const auto& [id, value] : metrics)
      if (id == want)
        list.push_back({{"id", id}, {"value", value}});
  return list.dump();
}

std::string job_metrics_json(const job_view& job, const std::optional<std::string>& get) {
  return metric_list_json(job_metrics(job), get);
}

std::string job_accumulators_json() {
  json j;
  j["job-accumulators"] = json::array();
  j["user-task-accumulators"] = json::array();
  j["serialized-user-task-accumulators"] = json::object();
  return j.dump();
}

std::string job_resource_requirements_json(const job_view& job) {
  // The default scheduler's requirements: each vertex at its parallelism.
  json j = json::object();
  for (const auto& v : job.report.vertices)
    j[v.id] = {{"parallelism", {{"lowerBound", v.parallelism}, {"upperBound", v.parallelism}}}};
  return j.dump();
}

} // namespace flint::rest
