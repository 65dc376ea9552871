#pragma once
/// Interned names for trace records: an endpoint's own id, a method's name, a gateway's target
/// are interned once, when the endpoint, method or gateway is made, and events carry the id
/// (trace_recorder.hpp's event), so recording a call copies no names.

#include <cstdint>
#include <string_view>

namespace flint::trace {

/// A name interned for the life of the process. 0 stands for "not interned": the text is given
/// instead. Text that comes from the wire (the caller an envelope names) is never interned, so
/// peers cannot grow the table.
using name_id = std::uint32_t;

/// The id of `text`, interning it on first use (a lock and a hash lookup: do it once, when an
/// endpoint, a method or a gateway is made, not per call). The table holds at most ~1 M names;
/// past that it gives 0 and events carry the text itself.
name_id intern(std::string_view text);

/// The text of an interned name ("" for 0). Valid for the life of the process.
std::string_view name_text(name_id id);

} // namespace flint::trace
