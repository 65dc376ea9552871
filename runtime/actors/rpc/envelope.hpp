#pragma once
/// The one message type endpoints exchange (DESIGN.md "RPC"). It crosses CAF as the bytes of a
/// Cap'n Proto `Envelope` (schemas/rpc.capnp), so local and remote calls take the same path and
/// CAF needs no custom type registration.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/actors/rpc/fencing_token.hpp"
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

std::vector<char> encode_envelope(const envelope& e);
expected<envelope> decode_envelope(std::span<const char> bytes);

/// The answer to an ask: the method's response message, or an error that crossed the wire.
std::vector<char> encode_reply(const expected<std::vector<char>>& reply);
expected<std::vector<char>> decode_reply(std::span<const char> bytes);

} // namespace flint::rpc
