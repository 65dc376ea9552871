#pragma once
/// `flint list`'s output, as Flink's CliFrontend#list prints it: running, scheduled and
/// (with -a) terminated jobs, each as "dd.MM.yyyy HH:mm:ss : <job id> : <name> (<STATUS>)",
/// oldest first, between dashed banners.

#include <optional>
#include <string>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"

namespace flint::cli {

struct list_selection {
  bool running = true; ///< -r
  bool scheduled = true; ///< -s
  bool all = false; ///< -a (running, scheduled and terminated)
};

/// The selection Flink makes of -r/-s/-a: none given shows running and scheduled jobs.
list_selection select_jobs(bool r, bool s, bool a);

/// The text `flint list` prints for `jobs`; `utc` prints times in UTC instead of local time.
std::string format_job_list(const dispatcher::job_list& jobs, list_selection selection,
                            bool utc = false);

/// One job's line, without the newline.
std::string format_job_line(const dispatcher::job_details& job, bool utc = false);

/// `flint status`: "Job <id> is RUNNING.", then the restarts and failures (newest first), and,
/// while not every task runs, the slot requests it waits for with their age.
std::string format_job_status(
  const graph::job_id& id, const job_master::job_status_response& report,
  const std::optional<resource_manager::resource_overview>& cluster = std::nullopt,
  bool utc = false);

} // namespace flint::cli
