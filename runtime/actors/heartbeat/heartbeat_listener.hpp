#pragma once
/// What a heartbeat manager reports to its owner (Flink's HeartbeatListener). Every call comes
/// from the owner's main thread; a listener may monitor or unmonitor targets from inside a call.

#include "runtime/actors/heartbeat/heartbeat_target.hpp"

namespace flint::heartbeat {

class heartbeat_listener {
public:
  virtual ~heartbeat_listener() = default;

  /// No heartbeat from `id` within `heartbeat.timeout`. Reported once per monitor; the target
  /// stays monitored until the owner unmonitors it (usually to reconnect).
  virtual void notify_heartbeat_timeout(const resource_id& id) = 0;

  /// `heartbeat.rpc-failure-threshold` consecutive heartbeat RPCs found `id` unreachable.
  /// Reported once per monitor, which then stops watching for a timeout.
  virtual void notify_target_unreachable(const resource_id& id) = 0;

  /// `id` sent a non-empty payload with its heartbeat or heartbeat request.
  virtual void report_payload(const resource_id& id, const payload& data) = 0;

  /// The payload to send to `id` with the next heartbeat or heartbeat request (empty: none).
  virtual payload retrieve_payload(const resource_id& id) = 0;
};

} // namespace flint::heartbeat
