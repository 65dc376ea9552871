#pragma once
/// The operators of one stream task (Flink's OperatorChain): built from the JobVertex's chain of
/// the program compiled in, each with its chained successors and its record writers.

#include "runtime/common/expected.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/partition_writer.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace flint::streaming {

class local_state_root;

/// The job a stream task runs: the program's graphs, compiled into the process.
struct job_program {
  std::shared_ptr<const graph::stream_graph> stream;
  std::shared_ptr<const graph::job_graph> job;
};

/// What the task gives every operator of its chain.
struct chain_hooks {
  std::function<void(std::string_view)> write_stdout;
  network::availability_listener wake;
  /// Raised while an output waits for buffers (the operators stop emitting).
  const bool* yield = nullptr;
  /// The task's interrupt flag (task_context::interrupt_flag).
  const std::atomic<bool>* interrupt = nullptr;
  /// The task's time budget per step.
  step_budget* budget = nullptr;
  /// Where the operators' local state goes (per operator subtask and attempt below it); null:
  /// each keyed state backend makes a private directory of its own.
  local_state_root* local_state = nullptr;
  /// The task's record timestamp slot and processing time (see operator_context).
  element_time* time = nullptr;
  processing_time_service* processing_time = nullptr;
  std::int64_t auto_watermark_interval = 200;
};

/// Head first; the head is the task's source (a SourceStreamTask) or its input.
struct operator_chain {
  std::vector<std::unique_ptr<stream_operator>> operators;
  source_operator* source = nullptr;
  serialized_input* input = nullptr;
  /// The head of a two-input task (instead of `input`).
  serialized_two_input* two_input = nullptr;
  /// Where each operator's watermarks go (the operators point at them).
  std::vector<std::unique_ptr<watermark_forwarder>> forwarders;
};

/// Builds `vertex`'s chain tail first, so each operator gets the operators it is chained to; a
/// non-chained output writes to the writer of its result among `writers` (which must outlive
/// the chain). Key groups come from the task's max parallelism, or a keyed input edge's.
expected<operator_chain> build_operator_chain(
  const job_program& program, const graph::task_deployment_descriptor& tdd,
  const graph::job_vertex& vertex, const std::vector<std::unique_ptr<partition_writer>>& writers,
  const chain_hooks& hooks);

} // namespace flint::streaming
