#pragma once
/// The far side of a heartbeat relation as the heartbeat manager sees it (Flink's
/// HeartbeatTarget): two calls, each mapped by the owning endpoint onto its own gateway methods
/// (RM → TM, RM → JM, JM → TM), or onto the generic ones with `make_heartbeat_target`.

#include <functional>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::heartbeat {

/// Identifies a heartbeat partner; Flint uses the partner's endpoint id (Flink's ResourceID).
using resource_id = std::string;

/// A heartbeat payload: opaque bytes (the relation's own Cap'n Proto message). Empty means
/// "no payload" and is not reported to the listener, like Flink's null payload.
using payload = std::vector<char>;

struct heartbeat_target {
  /// Completes a heartbeat RPC in the caller's main thread: unit, or the RPC's error
  /// (errc::unreachable is what counts towards `heartbeat.rpc-failure-threshold`).
  using done_fn = std::function<void(expected<unit>)>;
  using call_fn = std::function<void(const resource_id& origin, payload data, done_fn done)>;

  /// Asks the target for a heartbeat; the target answers later through `receive_heartbeat`.
  call_fn request_heartbeat;
  /// Delivers our heartbeat (the answer to the target's request) to the target.
  call_fn receive_heartbeat;
};

} // namespace flint::heartbeat
