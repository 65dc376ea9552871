#pragma once
/// The Cap'n Proto form of a trace record (schemas/trace_service.capnp `TraceRecord`), for the
/// generated codec of fetch_trace's answer. Enum numbers from another node are checked, not
/// cast blindly.

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/expected.hpp"
#include "schemas/trace_service.capnp.h"

namespace flint::wire {

void put(schema::TraceRecord::Builder b, const trace::record& r);
expected<unit> get(schema::TraceRecord::Reader r, trace::record& out);

} // namespace flint::wire
