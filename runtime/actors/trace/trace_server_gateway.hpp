#pragma once
/// The "trace" endpoint's protocol (DESIGN.md "Traces"): a client polls `fetch_trace` for the
/// records of the node's recorder from a sequence number on, and continues where the answer says.
/// Unfenced: a trace is diagnostics, readable by any client that can reach the node. Method ids
/// 0x0Exx. Codecs: trace_server_codec.cpp (schema: schemas/trace_service.capnp).

#include <cstdint>
#include <vector>

#include "runtime/actors/rpc/method.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace {

/// The endpoint id of a node's trace server (contract B).
inline constexpr const char* trace_endpoint_name = "trace";

/// Most records one answer carries, whatever the client asks for (about 200 bytes each).
inline constexpr std::uint32_t max_fetch_records = 4096;
/// What an answer carries when the client does not say.
inline constexpr std::uint32_t default_fetch_records = 1024;

struct fetch_trace_request {
  /// The first sequence number wanted; 0 takes everything the ring still holds.
  std::uint64_t from_sequence = 0;
  /// At most this many records; 0: `default_fetch_records`. Capped at `max_fetch_records`.
  std::uint32_t max_records = 0;
};

struct fetch_trace_response {
  /// In sequence order.
  std::vector<record> records;
  /// Records at or after `from_sequence` that the ring overwrote before they were fetched.
  std::uint64_t missed = 0;
  /// The `from_sequence` of the next fetch.
  std::uint64_t next_sequence = 0;
  /// Records the node has recorded so far.
  std::uint64_t recorded = 0;
};

/// Records of the node's recorder from a sequence number on. Unfenced.
struct fetch_trace {
  static constexpr std::uint32_t id = 0x0E01;
  static constexpr const char* name = "fetch_trace";
  using request = fetch_trace_request;
  using response = fetch_trace_response;
};

} // namespace flint::trace

namespace flint::rpc {
FLINT_DECLARE_CODEC(trace::fetch_trace_request)
FLINT_DECLARE_CODEC(trace::fetch_trace_response)
} // namespace flint::rpc
