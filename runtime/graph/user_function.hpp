#pragma once
/// Type-erased handles for what the user wrote: operators and key selectors.
///
/// The graph layer only names and routes them; the typed subclasses live in `api/` and the data
/// plane instantiates operators from them by StreamNode id.

#include "runtime/streaming/stream_operator.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace flint::graph {

/// Builds one operator of a StreamNode (Flink's StreamOperatorFactory), holding the user's
/// function. Subclasses are typed by the record types.
class operator_factory {
public:
  virtual ~operator_factory() = default;
  /// What the operator does, e.g. "map", "flat_map", "source.collection", "sink.print".
  virtual std::string_view kind() const = 0;
  /// The runtime operator of one subtask, wired to the outputs in `context` (the data plane calls
  /// this in the task's thread). Null when the factory cannot run.
  virtual std::unique_ptr<streaming::stream_operator> create_operator(streaming::operator_context& context) const {
    (void)context;
    return nullptr;
  }
};

/// Extracts the key of a record for key-group partitioning (Flink's KeySelector).
class key_selector {
public:
  virtual ~key_selector() = default;
  /// How the key was chosen, e.g. "field 0" or "key selector".
  virtual std::string description() const = 0;
};

} // namespace flint::graph
