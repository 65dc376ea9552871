#pragma once
/// Trace records as a Mermaid sequence diagram (`flint trace --export mermaid`).

#include <span>
#include <string>

#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace {

/// A Mermaid `sequenceDiagram`: one participant per endpoint (in order of appearance), `->>` for a
/// call when it is received (or when sent, if its receipt is not in `records`), `-->>` for a reply
/// (or the response, if the reply is not in `records`); calls that were rejected or failed are
/// drawn with `-x`/`--x` and a note with the outcome and its detail.
std::string export_mermaid(std::span<const record> records);

} // namespace flint::trace
