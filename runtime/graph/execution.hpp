#pragma once
/// One attempt to run an ExecutionVertex (Flink's Execution).

#include "runtime/common/expected.hpp"
#include "runtime/graph/execution_state.hpp"
#include "runtime/graph/ids.hpp"

#include <cstdint>
#include <string>

namespace flint::graph {

/// Names one attempt (Flink's ExecutionAttemptID since 1.15): the ExecutionGraph, the subtask
/// and the attempt number. Job vertex ids are hashes of the topology, so the graph's random id is
/// what keeps two jobs of one shape (and two leaderships of one job) apart on a TaskExecutor.
struct execution_attempt_id {
  graph::execution_graph_id execution_graph;
  job_vertex_id job_vertex;
  std::int32_t subtask_index = 0;
  std::int32_t attempt_number = 0;

  /// "<execution graph>_<job vertex>_<subtask>_<attempt>", as Flink prints it.
  std::string to_string() const {
    return execution_graph.to_string() + "_" + job_vertex.to_string() + "_"
      + std::to_string(subtask_index) + "_" + std::to_string(attempt_number);
  }
  friend auto operator<=>(const execution_attempt_id&, const execution_attempt_id&) = default;
};

/// The state of one attempt; starts CREATED and moves only along legal transitions.
class execution {
public:
  explicit execution(std::int32_t attempt_number = 0) : attempt_number_(attempt_number) {}

  std::int32_t attempt_number() const { return attempt_number_; }
  execution_state state() const { return state_; }

  /// Moves to `to`, or refuses with `illegal_state` and stays where it is.
  expected<unit> transition_state(execution_state to) {
    if (auto legal = check_transition(state_, to); !legal)
      return legal;
    state_ = to;
    return unit{};
  }

private:
  std::int32_t attempt_number_;
  execution_state state_ = execution_state::created;
};

} // namespace flint::graph
