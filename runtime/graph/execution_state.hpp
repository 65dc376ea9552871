#pragma once
/// The life of one Execution attempt (Flink's ExecutionState) and which moves are legal.

#include "runtime/common/expected.hpp"

#include <cstdint>
#include <string_view>

namespace flint::graph {

/// Flink's ExecutionState.
enum class execution_state : std::uint8_t {
  created,
  scheduled,
  deploying,
  initializing,
  running,
  finished,
  canceling,
  canceled,
  failed,
  reconciling,
};

/// "CREATED", "SCHEDULED", ...
std::string_view to_string(execution_state state);

/// FINISHED, CANCELED and FAILED: an attempt never leaves them.
bool is_terminal(execution_state state);

/// Whether an Execution may move from `from` to `to`. Flink spreads these rules over
/// `Execution`'s methods (deploy, switchToRunning, cancel, markFinished, markFailed,
/// completeCancelling); Flint gathers them in one table:
/// CREATED -> SCHEDULED | DEPLOYING | CANCELED | FAILED;
/// SCHEDULED -> DEPLOYING | CANCELED | FAILED;
/// DEPLOYING -> INITIALIZING | RUNNING | FINISHED | CANCELING | CANCELED | FAILED;
/// INITIALIZING -> RUNNING | FINISHED | CANCELING | CANCELED | FAILED;
/// RUNNING -> FINISHED | CANCELING | CANCELED | FAILED;
/// CANCELING -> CANCELED | FAILED;
/// RECONCILING -> INITIALIZING | RUNNING | FINISHED | CANCELING | CANCELED | FAILED;
/// nothing leaves a terminal state.
bool is_legal_transition(execution_state from, execution_state to);

/// `unit` when legal, else `illegal_state` with Flink's wording.
expected<unit> check_transition(execution_state from, execution_state to);

} // namespace flint::graph
