#pragma once
/// Reading trace records back from the JSON lines `to_json` writes (a node's `--trace-file`,
/// `flint trace --json`).

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/expected.hpp"

namespace flint::trace {

/// Parses one line written by `to_json`. Field order and whitespace do not matter, unknown fields
/// are ignored (newer writers may add some); text that is not JSON, a missing, mistyped or
/// duplicated field, or anything that is not one flat JSON object (string and integer values
/// only) is a `malformed_message` error naming the field, or the position and what the JSON
/// parser expected there. Strings must be UTF-8, as `to_json` writes them: a line with other bytes
/// in a string is malformed too.
expected<record> parse_record(std::string_view json_line);

/// "send", "receive", "reply" or "response".
expected<direction> parse_direction(std::string_view text);

/// One of the names `to_string(outcome)` gives.
expected<outcome> parse_outcome(std::string_view text);

/// What `read_records` found: the good records in file order and an account of the bad lines.
struct read_result {
  std::vector<record> records;
  std::size_t bad_lines = 0;
  /// The first bad line's error, its message prefixed with "line <n>: ".
  std::optional<error> first_error;
};

/// Reads JSON lines until the end of `in`. Blank lines are not records and are passed over; every
/// other line is either a record or counted as bad.
read_result read_records(std::istream& in);

} // namespace flint::trace
