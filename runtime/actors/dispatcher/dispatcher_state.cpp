#include "runtime/actors/dispatcher/dispatcher_state.hpp"

namespace flint::dispatcher {

expected<unit> dispatcher_state::add_job(const graph::job_graph& job, std::int64_t now_ms) {
  if (is_running(job.job_id) || is_archived(job.job_id))
    return make_error(
      errc::rejected,
      "Job has already been submitted: " + job.job_id.to_string() + " (" + job.name + ")");
  if (auto valid = job.validate(); !valid)
    return make_error(
      errc::invalid_argument,
      "The job graph of job " + job.job_id.to_string() + " is invalid: " + valid.error().message);
  if (job.vertices.empty())
    return make_error(errc::invalid_argument,
                      "The job graph of job " + job.job_id.to_string() + " has no vertices.");
  job_details d;
  d.job_id = job.job_id;
  d.name = job.name;
  d.status = graph::job_status::initializing;
  d.start_time_ms = now_ms;
  for (const auto& v : job.vertices)
    d.number_of_tasks += v.parallelism;
  running_[job.job_id] = d;
  order_.push_back(job.job_id);
  return unit{};
}

expected<unit> dispatcher_state::finish_job(const graph::job_id& id, graph::job_status status,
                                            std::string failure_cause, std::int64_t now_ms) {
  auto i = running_.find(id);
  if (i == running_.end())
    return make_error(errc::not_found, "Job " + id.to_string() + " is not running.");
  if (!graph::is_globally_terminal(status))
    return make_error(
      errc::illegal_state,
      "Job " + id.to_string() + " cannot end in state " + std::string(graph::to_string(status)));
  archived a;
  a.details = i->second;
  a.details.status = status;
  a.details.end_time_ms = now_ms;
  a.result = job_result{id, status, std::move(failure_cause), now_ms - i->second.start_time_ms};
  archive_[id] = std::move(a);
  running_.erase(i);
  return unit{};
}

void dispatcher_state::set_final_report(const graph::job_id& id,
                                        job_master::job_status_response report) {
  if (auto i = archive_.find(id); i != archive_.end()) {
    report.status = i->second.details.status;
    i->second.report = std::move(report);
  }
}

std::optional<job_master::job_status_response> dispatcher_state::final_report(
  const graph::job_id& id) const {
  auto i = archive_.find(id);
  if (i == archive_.end())
    return std::nullopt;
  auto report = i->second.report;
  report.status = i->second.details.status;
  return report;
}

std::optional<job_details> dispatcher_state::details(const graph::job_id& id) const {
  if (auto i = running_.find(id); i != running_.end())
    return i->second;
  if (auto i = archive_.find(id); i != archive_.end())
    return i->second.details;
  return std::nullopt;
}

std::optional<job_result> dispatcher_state::result(const graph::job_id& id) const {
  if (auto i = archive_.find(id); i != archive_.end())
    return i->second.result;
  return std::nullopt;
}

void dispatcher_state::set_status(const graph::job_id& id, graph::job_status status) {
  if (auto i = running_.find(id); i != running_.end())
    i->second.status = status;
}

void dispatcher_state::archive_result(const graph::job_id& id, std::string name,
                                      graph::job_status status, std::string cause,
                                      std::int64_t net_runtime_ms, std::int64_t now_ms) {
  if (is_running(id) || is_archived(id))
    return;
  archived a;
  a.details.job_id = id;
  a.details.name = std::move(name);
  a.details.status = status;
  a.details.start_time_ms = now_ms - net_runtime_ms;
  a.details.end_time_ms = now_ms;
  a.result = job_result{id, status, std::move(cause), net_runtime_ms};
  archive_[id] = std::move(a);
  order_.push_back(id);
}

void dispatcher_state::suspend_job(const graph::job_id& id) {
  if (running_.erase(id) > 0)
    std::erase(order_, id);
}

std::vector<graph::job_id> dispatcher_state::running_jobs() const {
  std::vector<graph::job_id> out;
  for (const auto& id : order_)
    if (is_running(id))
      out.push_back(id);
  return out;
}

job_list dispatcher_state::list() const {
  job_list out;
  for (const auto& id : order_)
    if (auto i = running_.find(id); i != running_.end())
      out.jobs.push_back(i->second);
  for (const auto& id : order_)
    if (auto i = archive_.find(id); i != archive_.end())
      out.jobs.push_back(i->second.details);
  return out;
}

} // namespace flint::dispatcher
