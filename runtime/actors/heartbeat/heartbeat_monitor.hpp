#pragma once
/// Watches one heartbeat target (Flink's HeartbeatMonitorImpl): reports a timeout when no
/// heartbeat arrives within `timeout`, and the target unreachable after a run of heartbeat RPCs
/// that could not reach it. Plain logic on a `main_thread_executor`, used from its main thread.
///
/// Timers cannot be cancelled, so each (re-)arm bumps a generation and a timer that finds a
/// newer generation does nothing.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "runtime/actors/heartbeat/heartbeat_listener.hpp"
#include "runtime/actors/heartbeat/heartbeat_target.hpp"
#include "runtime/actors/heartbeat/main_thread_executor.hpp"

namespace flint::heartbeat {

class heartbeat_monitor : public std::enable_shared_from_this<heartbeat_monitor> {
  struct passkey {};

public:
  enum class state {
    /// Waiting for heartbeats; a timeout is armed.
    running,
    /// Reported to the listener as timed out; nothing more is reported.
    timed_out,
    /// Reported to the listener as unreachable; nothing more is reported.
    unreachable,
    /// Stopped by its manager without a report.
    canceled,
  };

  /// A running monitor of `id` whose first timeout is armed now. A `rpc_failure_threshold`
  /// of -1 (or any value below 1) disables unreachability detection.
  static std::shared_ptr<heartbeat_monitor> start(resource_id id, heartbeat_target target,
                                                  std::shared_ptr<main_thread_executor> executor,
                                                  heartbeat_listener& listener,
                                                  std::chrono::nanoseconds timeout,
                                                  int rpc_failure_threshold);

  heartbeat_monitor(passkey, resource_id id, heartbeat_target target,
                    std::shared_ptr<main_thread_executor> executor, heartbeat_listener& listener,
                    std::chrono::nanoseconds timeout, int rpc_failure_threshold);

  const resource_id& target_id() const noexcept { return id_; }
  const heartbeat_target& target() const noexcept { return target_; }
  state current_state() const noexcept { return state_; }

  /// When the last heartbeat from the target arrived; empty before the first.
  std::optional<time_point> last_heartbeat() const noexcept { return last_heartbeat_; }

  /// Heartbeat RPCs that found the target unreachable since the last one that succeeded.
  int failed_rpcs() const noexcept { return failed_rpcs_; }

  /// A heartbeat arrived: remember when and, while running, restart the timeout.
  void report_heartbeat();

  /// A heartbeat RPC to the target succeeded: the failure run is over.
  void report_rpc_success();

  /// A heartbeat RPC found the target unreachable (not merely slow: timeouts do not count).
  void report_rpc_failure();

  /// Stops watching without reporting anything.
  void cancel();

private:
  void arm();
  void on_timeout(std::uint64_t generation);

  resource_id id_;
  heartbeat_target target_;
  std::shared_ptr<main_thread_executor> executor_;
  heartbeat_listener& listener_;
  std::chrono::nanoseconds timeout_;
  int rpc_failure_threshold_;
  state state_ = state::running;
  std::optional<time_point> last_heartbeat_;
  int failed_rpcs_ = 0;
  std::uint64_t generation_ = 0;
};

/// "running", "timed_out", "unreachable", "canceled".
const char* to_string(heartbeat_monitor::state s);

} // namespace flint::heartbeat
