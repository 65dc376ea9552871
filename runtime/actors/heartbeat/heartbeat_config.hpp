#pragma once
/// Heartbeat settings, under Flink's configuration keys and with Flink's defaults.

#include <chrono>
#include <map>
#include <string>

#include "runtime/common/expected.hpp"

namespace flint::heartbeat {

struct heartbeat_config {
  /// Configuration key of `interval`, in milliseconds.
  static constexpr const char* interval_key = "heartbeat.interval";
  /// Configuration key of `timeout`, in milliseconds.
  static constexpr const char* timeout_key = "heartbeat.timeout";
  /// Configuration key of `rpc_failure_threshold`.
  static constexpr const char* rpc_failure_threshold_key = "heartbeat.rpc-failure-threshold";

  /// `heartbeat.interval`: how often a sender requests a heartbeat from each target.
  std::chrono::milliseconds interval = std::chrono::seconds(10);
  /// `heartbeat.timeout`: how long a monitor waits for a heartbeat before reporting the target.
  std::chrono::milliseconds timeout = std::chrono::seconds(50);
  /// `heartbeat.rpc-failure-threshold`: consecutive heartbeat RPCs that found the target
  /// unreachable before it is reported unreachable; -1 disables the detection.
  int rpc_failure_threshold = 2;

  /// Refuses non-positive durations, a timeout not longer than the interval (a target could
  /// then time out between two requests), and thresholds other than a positive number or -1.
  expected<unit> validate() const;

  /// Reads the three keys (durations as integer milliseconds, as Flink writes them) from
  /// `settings`, keeping the defaults of absent keys, then validates the result.
  static expected<heartbeat_config> from_settings(
    const std::map<std::string, std::string>& settings);
};

} // namespace flint::heartbeat
