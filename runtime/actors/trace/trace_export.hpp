#pragma once
/// Reading trace records back from their JSON-lines form, selecting them, and exporting them as a
/// Chrome/Perfetto trace-event file or a Mermaid sequence diagram (DESIGN.md "Traces").

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/expected.hpp"

namespace flint::trace {

/// Parses one line written by `to_json`. Field order and whitespace do not matter, unknown fields
/// are ignored (newer writers may add some); a missing, mistyped or duplicated field, or anything
/// that is not one flat JSON object, is a `malformed_message` error naming the field or position.
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

/// Which records to keep; an empty field keeps all.
struct record_filter {
  /// Prefix of the sender or the receiver endpoint id ("task_executor/" keeps every TaskExecutor).
  std::string endpoint;
  /// Exact method name, e.g. "offer_slots".
  std::string method;
  /// A job id, or its leading part: keeps records from or to a job's endpoints
  /// ("job_master/<job id>", "slot_pool/<job id>").
  std::string job;
  std::optional<direction> dir;

  bool matches(const record& r) const;
};

/// The records `f` keeps, in their order.
std::vector<record> filter(std::span<const record> records, const record_filter& f);

/// The process an endpoint runs in, for grouping: "TaskManager <id>" for "task_executor/<id>",
/// "JobManager" for the Dispatcher, ResourceManager, JobMasters and SlotPools, and the id's first
/// path segment for anything else (a CLI client, say).
std::string node_of(std::string_view endpoint_id);

/// Chrome trace-event JSON (`{"traceEvents":[...]}`) that chrome://tracing and Perfetto open: one
/// process per node (`node_of`), one thread per endpoint; an ask is a complete event from send to
/// response on the caller and from receive to reply on the callee; a tell is an instant event on
/// both sides; flow events keyed by span id link each send to its receive. Asks of one endpoint
/// that overlap without nesting (concurrent calls) go on extra threads of that endpoint, named
/// "<endpoint> (2)" and so on, because viewers need the slices of a thread to nest. Each slice's
/// args hold token, bytes, outcome, detail, latency and the trace/span ids. Timestamps are
/// microseconds since the earliest record; events are sorted by time.
std::string export_chrome(std::span<const record> records);

/// A Mermaid `sequenceDiagram`: one participant per endpoint (in order of appearance), `->>` for a
/// call when it is received (or when sent, if its receipt is not in `records`), `-->>` for a reply
/// (or the response, if the reply is not in `records`); calls that were rejected or failed are
/// drawn with `-x`/`--x` and a note with the outcome and its detail.
std::string export_mermaid(std::span<const record> records);

} // namespace flint::trace
