#include "apps/cli/job_list_format.hpp"

#include <algorithm>
#include <ctime>
#include <vector>

namespace flint::cli {

namespace {

constexpr const char* running_banner =
  "------------------ Running/Restarting Jobs -------------------";
constexpr const char* scheduled_banner =
  "----------------------- Scheduled Jobs -----------------------";
constexpr const char* terminated_banner =
  "---------------------- Terminated Jobs -----------------------";
constexpr const char* end_banner = "--------------------------------------------------------------";

std::string format_time(std::int64_t epoch_ms, bool utc) {
  std::time_t secs = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  if (utc)
    gmtime_r(&secs, &tm);
  else
    localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%d.%m.%Y %H:%M:%S", &tm);
  return buf;
}

void print_section(std::string& out, const char* banner, std::vector<dispatcher::job_details> jobs,
                   bool utc) {
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& a, const auto& b) { return a.start_time_ms < b.start_time_ms; });
  out += banner;
  out += '\n';
  for (const auto& j : jobs)
    out += format_job_line(j, utc) + '\n';
  out += end_banner;
  out += '\n';
}

} // namespace

list_selection select_jobs(bool r, bool s, bool a) {
  if (!r && !s && !a)
    return {true, true, false};
  return {r, s, a};
}

std::string format_job_line(const dispatcher::job_details& job, bool utc) {
  return format_time(job.start_time_ms, utc) + " : " + job.job_id.to_string() + " : " + job.name
    + " (" + std::string(graph::to_string(job.status)) + ")";
}

std::string format_job_status(const graph::job_id& id,
                              const job_master::job_status_response& report,
                              const std::optional<resource_manager::resource_overview>& cluster,
                              bool utc) {
  std::string out =
    "Job " + id.to_string() + " is " + std::string(graph::to_string(report.status)) + ".\n";
  if (report.restarts > 0 || !report.failures.empty())
    out += "Restarts: " + std::to_string(report.restarts)
      + ", failures: " + std::to_string(report.failures.size()) + "\n";
  for (const auto& f : report.failures) {
    out += "  " + format_time(f.timestamp, utc) + " "
      + (f.task.empty() ? std::string("(global failure)") : f.task);
    if (!f.location.empty())
      out += " on " + f.location;
    out += ": " + f.cause + "\n";
  }
  if (report.checkpointing) {
    const auto& c = report.checkpoints;
    out += "Checkpoints: " + std::to_string(c.completed) + " completed, " + std::to_string(c.failed)
      + " failed, " + std::to_string(c.in_progress) + " in progress\n";
    if (c.latest_id > 0)
      out += "Latest completed checkpoint: " + std::to_string(c.latest_id) + " ("
        + std::to_string(c.latest_duration_ms) + " ms, " + std::to_string(c.latest_state_bytes)
        + " bytes" + (c.latest_external_path.empty() ? "" : ", " + c.latest_external_path) + ")\n";
  }
  if (!graph::is_terminal(report.status) && report.tasks > 0
      && report.tasks_running < report.tasks) {
    out += "Tasks running: " + std::to_string(report.tasks_running) + " of "
      + std::to_string(report.tasks) + "; slots assigned: " + std::to_string(report.slots_assigned)
      + " of " + std::to_string(report.slots_needed)
      + " needed; TaskManagers registered with the job: "
      + std::to_string(report.registered_task_managers) + "\n";
    if (cluster)
      out += "Cluster: " + std::to_string(cluster->number_free_slots) + " of "
        + std::to_string(cluster->number_registered_slots) + " slots free on "
        + std::to_string(cluster->number_task_managers) + " TaskManagers; "
        + std::to_string(report.slots_needed - report.slots_assigned) + " more needed\n";
    for (const auto& p : report.pending_slot_requests)
      out += "  waiting for a slot: request " + p.request + " pending for "
        + std::to_string(p.age_ms) + " ms\n";
  }
  return out;
}

std::string format_job_list(const dispatcher::job_list& jobs, list_selection selection, bool utc) {
  std::vector<dispatcher::job_details> running;
  std::vector<dispatcher::job_details> scheduled;
  std::vector<dispatcher::job_details> terminated;
  for (const auto& j : jobs.jobs) {
    if (j.status == graph::job_status::created || j.status == graph::job_status::initializing)
      scheduled.push_back(j);
    else if (!graph::is_globally_terminal(j.status))
      running.push_back(j);
    else
      terminated.push_back(j);
  }
  std::string out;
  if (selection.running || selection.all) {
    if (running.empty())
      out += "No running jobs.\n";
    else
      print_section(out, running_banner, std::move(running), utc);
  }
  if (selection.scheduled || selection.all) {
    if (scheduled.empty())
      out += "No scheduled jobs.\n";
    else
      print_section(out, scheduled_banner, std::move(scheduled), utc);
  }
  if (selection.all && !terminated.empty())
    print_section(out, terminated_banner, std::move(terminated), utc);
  return out;
}

} // namespace flint::cli
