#pragma once
/// The generic heartbeat methods (Flink's HeartbeatTarget as RPC): `request_heartbeat` from a
/// sender to its target, `receive_heartbeat` for the target's answer. Both carry a
/// `heartbeat_request` and are confirmed with an `ack` at once; the answer to a request is a
/// separate call, as in Flink.
///
/// An endpoint serving one relation can register these directly; an endpoint with several
/// relations (the ResourceManager heartbeats TaskExecutors and JobMasters) declares its own
/// method descriptors with the same request type and other ids, and passes them to
/// `make_heartbeat_target` (heartbeat_rpc.hpp). Unfenced here; fenced relations choose.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/actors/heartbeat/heartbeat_target.hpp"
#include "runtime/actors/rpc/method.hpp"

namespace flint::heartbeat {

/// One heartbeat or heartbeat request.
struct heartbeat_request {
  /// Resource id (endpoint id) of the endpoint the heartbeat comes from.
  resource_id origin;
  /// Opaque payload of the relation; empty when it carries none.
  payload data;

  friend bool operator==(const heartbeat_request&, const heartbeat_request&) = default;
};

/// A sender asks its target for a heartbeat. Reply: ack, at once.
struct request_heartbeat_method {
  static constexpr std::uint32_t id = 0x0100;
  static constexpr const char* name = "request_heartbeat";
  using request = heartbeat_request;
  using response = rpc::ack;
};

/// A target answers a heartbeat request. Reply: ack, at once.
struct receive_heartbeat_method {
  static constexpr std::uint32_t id = 0x0101;
  static constexpr const char* name = "receive_heartbeat";
  using request = heartbeat_request;
  using response = rpc::ack;
};

} // namespace flint::heartbeat

namespace flint::rpc {

template <>
struct codec<heartbeat::heartbeat_request> {
  static std::vector<char> encode(const heartbeat::heartbeat_request& x);
  static expected<heartbeat::heartbeat_request> decode(std::span<const char> bytes);
};

} // namespace flint::rpc
