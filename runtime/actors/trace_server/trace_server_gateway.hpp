#pragma once
/// The "trace" endpoint's protocol (DESIGN.md "Traces"): a client polls `fetch_trace` for the
/// records of the node's recorder from a sequence number on, and continues where the answer says.
/// Unfenced: a trace is diagnostics, readable by any client that can reach the node. Method ids
/// 0x0Exx. Messages: schemas/trace_service.capnp (flint-capnpc generates their C++ types and
/// codecs).

#include <cstdint>

#include "runtime/actors/rpc/method.hpp"
#include "schemas/trace_service.messages.hpp"

namespace flint::trace {

/// The endpoint id of a node's trace server (contract B).
inline constexpr const char* trace_endpoint_name = "trace";

/// Most records one answer carries, whatever the client asks for (about 200 bytes each).
inline constexpr std::uint32_t max_fetch_records = 4096;
/// What an answer carries when the client does not say.
inline constexpr std::uint32_t default_fetch_records = 1024;

/// Records of the node's recorder from a sequence number on. Unfenced.
struct fetch_trace {
  static constexpr std::uint32_t id = 0x0E01;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "fetch_trace";
  using request = fetch_trace_request;
  using response = fetch_trace_response;
};

} // namespace flint::trace
