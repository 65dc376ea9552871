#pragma once
/// The one message type endpoints exchange (DESIGN.md "RPC"). It crosses CAF as bytes: a Cap'n
/// Proto `Envelope` header (schemas/rpc.capnp) and the request message after it, so local and
/// remote calls take the same path and CAF needs no custom type registration. An answer is the
/// response message itself, or an error (rpc_error.hpp).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/actors/envelope/fencing_token.hpp"
#include "runtime/common/expected.hpp"

namespace flint::rpc {

/// Where a call sits in a causal chain of calls: a handler's outgoing calls share its trace id
/// and name its span as their parent.
struct trace_context {
  std::uint64_t trace_id = 0;
  std::uint64_t span_id = 0;
  std::uint64_t parent_span_id = 0;
};

struct envelope {
  std::uint32_t method_id = 0;
  fencing_token token;
  /// Which relationship's token applies at endpoints fenced per relationship (a job id at a
  /// TaskExecutor); empty elsewhere.
  std::string fencing_scope;
  trace_context trace;
  /// Endpoint id of the caller, e.g. "resource_manager" or "task_executor/tm-1".
  std::string sender;
  /// The method's own Cap'n Proto request message.
  std::vector<char> payload;
};

/// On the wire a call is the Envelope message (schemas/rpc.capnp) directly followed by the
/// method's request message: the request is written once, straight after the header, and read
/// where it lies. The header is written word by word in the layout Cap'n Proto's builder gives
/// it (the same bytes, no builder).
std::vector<char> encode_envelope(const envelope& e);

/// Writes `header`'s Envelope message (its payload field is ignored) into `out`, reserving
/// `payload_size` more bytes for the request message the caller appends.
void write_envelope_header(std::vector<char>& out, const envelope& header,
                           std::size_t payload_size);

/// A received call: its header (payload empty) and a view of the request bytes after it.
struct received_envelope {
  envelope header;
  std::span<const char> payload;
};

/// Reads a call in place; `bytes` must outlive the result. A header in the layout
/// write_envelope_header writes is read word by word; any other is read by Cap'n Proto.
expected<received_envelope> read_envelope(std::span<const char> bytes);

/// read_envelope through Cap'n Proto's reader whatever the layout (tests compare the two).
expected<received_envelope> read_envelope_with_capnp(std::span<const char> bytes);

/// Reads a call and copies its request (tests, tools).
expected<envelope> decode_envelope(std::span<const char> bytes);

} // namespace flint::rpc
