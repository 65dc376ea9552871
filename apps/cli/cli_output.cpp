#include "apps/cli/cli_output.hpp"

#include <iostream>

#include "apps/cli/exit_codes.hpp"

namespace flint::cli {

int fail(const std::string& message) {
  std::cerr << "flint: " << message << std::endl;
  return exit_failure;
}

int report_result(const dispatcher::job_result& result) {
  auto id = result.job_id.to_string();
  switch (result.status) {
    case graph::job_status::finished:
      std::cout << "Program execution finished\n"
                << "Job with JobID " << id << " has finished.\n"
                << "Job Runtime: " << result.net_runtime_ms << " ms" << std::endl;
      return exit_ok;
    case graph::job_status::canceled: return fail("Job with JobID " + id + " was cancelled.");
    default:
      return fail("Job failed (JobID: " + id + ", status "
                  + std::string(graph::to_string(result.status)) + ")"
                  + (result.failure_cause.empty() ? "" : ": " + result.failure_cause));
  }
}

} // namespace flint::cli
