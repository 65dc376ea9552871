#include "apps/trace_tools/trace_filter.hpp"

namespace flint::trace {

namespace {

bool is_job_endpoint_of(std::string_view endpoint, std::string_view job) {
  auto slash = endpoint.find('/');
  if (slash == std::string_view::npos)
    return false;
  auto kind = endpoint.substr(0, slash);
  if (kind == "task_executor")
    return false; // its suffix is a TaskManager id, not a job
  return endpoint.substr(slash + 1).starts_with(job);
}

} // namespace

bool record_filter::matches(const record& r) const {
  if (!endpoint.empty() && !r.from.starts_with(endpoint) && !r.to.starts_with(endpoint))
    return false;
  if (!method.empty() && r.method != method)
    return false;
  if (!job.empty() && !is_job_endpoint_of(r.from, job) && !is_job_endpoint_of(r.to, job))
    return false;
  if (dir && r.dir != *dir)
    return false;
  return true;
}

std::vector<record> filter(std::span<const record> records, const record_filter& f) {
  std::vector<record> out;
  for (const auto& r : records)
    if (f.matches(r))
      out.push_back(r);
  return out;
}

std::string node_of(std::string_view endpoint_id) {
  auto slash = endpoint_id.find('/');
  auto kind = endpoint_id.substr(0, slash);
  if (kind == "task_executor")
    return slash == std::string_view::npos
      ? std::string("TaskManager")
      : "TaskManager " + std::string(endpoint_id.substr(slash + 1));
  if (kind == "dispatcher" || kind == "resource_manager" || kind == "job_master"
      || kind == "slot_pool")
    return "JobManager";
  if (kind.empty())
    return "unknown";
  return std::string(kind);
}

} // namespace flint::trace
