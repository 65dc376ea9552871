#pragma once
/// A user function the data plane can run (Flink's StreamOperatorFactory): the graph layer names
/// and routes `graph::operator_factory`s; the ones that make a runtime operator are these. The
/// graph layer stays below the data plane: it never sees what a factory builds.

#include <cstdint>
#include <memory>

#include "runtime/common/expected.hpp"

#include "runtime/graph/user_function.hpp"
#include "runtime/streaming/stream_operator.hpp"

namespace flint::streaming {

/// What `initialize_global` knows of the job.
struct global_initialization_context {
  std::int32_t parallelism = 1;
  /// The job checkpoints (file sinks then commit with checkpoints).
  bool checkpointing = false;
};

class stream_operator_factory : public graph::operator_factory {
public:
  /// Prepares what the operator writes outside the job before it runs, once per submission
  /// (Flink's OutputFormat#initializeGlobal); an error refuses the job. Most operators write
  /// nothing outside.
  virtual expected<unit> initialize_global(const global_initialization_context&) const {
    return unit{};
  }
  /// The runtime operator of one subtask, wired to the outputs in `context` (the data plane calls
  /// this in the task's thread). Null when the factory cannot run.
  virtual std::unique_ptr<stream_operator> create_operator(operator_context& context) const = 0;
};

} // namespace flint::streaming
