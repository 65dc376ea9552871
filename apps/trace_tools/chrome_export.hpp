#pragma once
/// Trace records as a Chrome trace-event file (`flint trace --export chrome`).

#include <span>
#include <string>

#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace {

/// Chrome trace-event JSON (`{"traceEvents":[...]}`) that chrome://tracing and Perfetto open: one
/// process per node (`node_of`), one thread per endpoint; an ask is a complete event from send to
/// response on the caller and from receive to reply on the callee; a tell is an instant event on
/// both sides; flow events keyed by span id link each send to its receive. Asks of one endpoint
/// that overlap without nesting (concurrent calls) go on extra threads of that endpoint, named
/// "<endpoint> (2)" and so on, because viewers need the slices of a thread to nest. Each slice's
/// args hold token, bytes, outcome, detail, latency and the trace/span ids. Timestamps are
/// microseconds since the earliest record; events are sorted by time. Bytes of endpoint ids,
/// methods and details that are not UTF-8 are written as U+FFFD.
std::string export_chrome(std::span<const record> records);

} // namespace flint::trace
