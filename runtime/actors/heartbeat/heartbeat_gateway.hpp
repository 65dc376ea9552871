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
/// Messages: schemas/heartbeat.capnp.

#include <cstdint>

#include "runtime/actors/heartbeat/heartbeat_target.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/heartbeat.messages.hpp"

namespace flint::heartbeat {

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
