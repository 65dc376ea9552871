#pragma once
/// A user function the data plane can run (Flink's StreamOperatorFactory): the graph layer names
/// and routes `graph::operator_factory`s; the ones that make a runtime operator are these. The
/// graph layer stays below the data plane: it never sees what a factory builds.

#include <memory>

#include "runtime/graph/user_function.hpp"
#include "runtime/streaming/stream_operator.hpp"

namespace flint::streaming {

class stream_operator_factory : public graph::operator_factory {
public:
  /// The runtime operator of one subtask, wired to the outputs in `context` (the data plane calls
  /// this in the task's thread). Null when the factory cannot run.
  virtual std::unique_ptr<stream_operator> create_operator(operator_context& context) const = 0;
};

} // namespace flint::streaming
