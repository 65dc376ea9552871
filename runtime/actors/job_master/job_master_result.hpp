#pragma once
/// How a job ended on its JobMaster (what the Dispatcher turns into the job result).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_status.hpp"

namespace flint::job_master {

struct job_master_result {
  graph::job_id job;
  /// FINISHED, CANCELED or FAILED.
  graph::job_status status = graph::job_status::failed;
  /// Why the job failed; empty otherwise.
  std::string failure_cause;
  /// Its exception history (newest first) and restarts, kept by the Dispatcher's archive.
  std::vector<job_failure> failures;
  std::uint64_t restarts = 0;
  /// The graph's JSON plan and its vertices as they ended, for the archive's REST views.
  std::string plan;
  std::vector<vertex_status> vertices;
  /// The job's last full status report (checkpoint statistics and settings included).
  job_status_response report;
  friend bool operator==(const job_master_result&, const job_master_result&) = default;
};

} // namespace flint::job_master
