#pragma once
/// Type-erased handles for what the user wrote: operators and key selectors.
///
/// The graph layer only names and routes them; the typed subclasses live in `api/`, and those the
/// data plane runs are `streaming::stream_operator_factory`s, instantiated by StreamNode id.

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
};

/// Extracts the key of a record for key-group partitioning (Flink's KeySelector).
class key_selector {
public:
  virtual ~key_selector() = default;
  /// How the key was chosen, e.g. "field 0" or "key selector".
  virtual std::string description() const = 0;
};

} // namespace flint::graph
