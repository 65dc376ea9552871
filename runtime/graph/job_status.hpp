#pragma once
/// The life of a job on its JobMaster (Flink's JobStatus) and which moves are legal.

#include "runtime/common/expected.hpp"

#include <cstdint>
#include <string_view>

namespace flint::graph {

/// Flink's JobStatus.
enum class job_status : std::uint8_t {
  initializing,
  created,
  running,
  failing,
  failed,
  cancelling,
  canceled,
  finished,
  restarting,
  suspended,
  reconciling,
};

/// "INITIALIZING", "CREATED", ...
std::string_view to_string(job_status status);

/// FINISHED, CANCELED, FAILED: terminal for the whole cluster.
bool is_globally_terminal(job_status status);
/// Globally terminal or SUSPENDED (terminal for this JobMaster only).
bool is_terminal(job_status status);

/// Whether the ExecutionGraph may move from `from` to `to` (the moves Flink's ExecutionGraph and
/// scheduler make; nothing leaves a terminal state):
/// INITIALIZING -> CREATED | FAILED | CANCELED | SUSPENDED;
/// CREATED -> RUNNING | FAILING | FAILED | CANCELLING | CANCELED | SUSPENDED;
/// RUNNING -> FINISHED | FAILING | FAILED | CANCELLING | RESTARTING | SUSPENDED;
/// FAILING -> FAILED | RESTARTING | CANCELLING | SUSPENDED;
/// CANCELLING -> CANCELED | FAILED | SUSPENDED;
/// RESTARTING -> CREATED | RUNNING | FAILING | FAILED | CANCELLING | CANCELED | SUSPENDED;
/// RECONCILING -> RUNNING | FINISHED | FAILING | FAILED | CANCELLING | SUSPENDED.
bool is_legal_transition(job_status from, job_status to);

/// `unit` when legal, else `illegal_state`.
expected<unit> check_transition(job_status from, job_status to);

} // namespace flint::graph
