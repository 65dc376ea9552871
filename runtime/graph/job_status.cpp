#include "runtime/graph/job_status.hpp"

#include <initializer_list>
#include <string>

namespace flint::graph {

std::string_view to_string(job_status status) {
  switch (status) {
    case job_status::initializing: return "INITIALIZING";
    case job_status::created: return "CREATED";
    case job_status::running: return "RUNNING";
    case job_status::failing: return "FAILING";
    case job_status::failed: return "FAILED";
    case job_status::cancelling: return "CANCELLING";
    case job_status::canceled: return "CANCELED";
    case job_status::finished: return "FINISHED";
    case job_status::restarting: return "RESTARTING";
    case job_status::suspended: return "SUSPENDED";
    case job_status::reconciling: return "RECONCILING";
  }
  return "?";
}

bool is_globally_terminal(job_status status) {
  return status == job_status::finished || status == job_status::canceled
    || status == job_status::failed;
}

bool is_terminal(job_status status) {
  return is_globally_terminal(status) || status == job_status::suspended;
}

bool is_legal_transition(job_status from, job_status to) {
  using s = job_status;
  auto any = [to](std::initializer_list<job_status> allowed) {
    for (auto a : allowed)
      if (a == to)
        return true;
    return false;
  };
  switch (from) {
    case s::initializing: return any({s::created, s::failed, s::canceled, s::suspended});
    case s::created:
      return any({s::running, s::failing, s::failed, s::cancelling, s::canceled, s::suspended});
    case s::running:
      return any({s::finished, s::failing, s::failed, s::cancelling, s::restarting, s::suspended});
    case s::failing: return any({s::failed, s::restarting, s::cancelling, s::suspended});
    case s::cancelling: return any({s::canceled, s::failed, s::suspended});
    case s::restarting:
      return any(
        {s::created, s::running, s::failing, s::failed, s::cancelling, s::canceled, s::suspended});
    case s::reconciling:
      return any({s::running, s::finished, s::failing, s::failed, s::cancelling, s::suspended});
    case s::failed:
    case s::canceled:
    case s::finished:
    case s::suspended: return false;
  }
  return false;
}

expected<unit> check_transition(job_status from, job_status to) {
  if (is_legal_transition(from, to))
    return unit{};
  if (is_terminal(from))
    return make_error(errc::illegal_state,
                      "Job is trying to leave terminal state " + std::string(to_string(from))
                        + " for " + std::string(to_string(to)) + ".");
  return make_error(errc::illegal_state,
                    "Illegal job status transition from " + std::string(to_string(from)) + " to "
                      + std::string(to_string(to)) + ".");
}

} // namespace flint::graph
