#include "runtime/graph/execution_state.hpp"

#include <string>

namespace flint::graph {

std::string_view to_string(execution_state state) {
  switch (state) {
    case execution_state::created: return "CREATED";
    case execution_state::scheduled: return "SCHEDULED";
    case execution_state::deploying: return "DEPLOYING";
    case execution_state::initializing: return "INITIALIZING";
    case execution_state::running: return "RUNNING";
    case execution_state::finished: return "FINISHED";
    case execution_state::canceling: return "CANCELING";
    case execution_state::canceled: return "CANCELED";
    case execution_state::failed: return "FAILED";
    case execution_state::reconciling: return "RECONCILING";
  }
  return "?";
}

bool is_terminal(execution_state state) {
  return state == execution_state::finished || state == execution_state::canceled
    || state == execution_state::failed;
}

bool is_legal_transition(execution_state from, execution_state to) {
  using s = execution_state;
  switch (from) {
    case s::created:
      return to == s::scheduled || to == s::deploying || to == s::canceled || to == s::failed;
    case s::scheduled: return to == s::deploying || to == s::canceled || to == s::failed;
    case s::deploying:
    case s::initializing:
    case s::reconciling:
      return (to == s::initializing && from != s::initializing) || to == s::running
        || to == s::finished || to == s::canceling || to == s::canceled || to == s::failed;
    case s::running:
      return to == s::finished || to == s::canceling || to == s::canceled || to == s::failed;
    case s::canceling: return to == s::canceled || to == s::failed;
    case s::finished:
    case s::canceled:
    case s::failed: return false;
  }
  return false;
}

expected<unit> check_transition(execution_state from, execution_state to) {
  if (is_legal_transition(from, to))
    return unit{};
  if (is_terminal(from))
    return make_error(errc::illegal_state,
                      "Cannot leave terminal state " + std::string(to_string(from))
                        + " to transition to " + std::string(to_string(to)) + ".");
  return make_error(errc::illegal_state,
                    "Illegal execution state transition from " + std::string(to_string(from))
                      + " to " + std::string(to_string(to)) + ".");
}

} // namespace flint::graph
