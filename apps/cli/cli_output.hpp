#pragma once
/// Lines every verb prints the same way: errors on stderr, a job's end as Flink's client words it.

#include <string>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"

namespace flint::cli {

/// "flint: <message>" on stderr; returns exit_failure.
int fail(const std::string& message);

/// A finished job: "Program execution finished", "Job with JobID <id> has finished.",
/// "Job Runtime: <n> ms" (exit_ok). A cancelled or failed one: the reason on stderr (exit_failure).
int report_result(const dispatcher::job_result& result);

} // namespace flint::cli
