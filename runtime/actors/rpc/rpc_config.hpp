#pragma once
#include <chrono>

namespace flint::rpc {

/// RPC settings shared by every endpoint of a node (Flink's `rpc.*` / `akka.*` keys).
struct rpc_config {
  /// `rpc.ask.timeout`: how long an ask waits for its answer.
  std::chrono::nanoseconds ask_timeout = std::chrono::seconds(10);
};

} // namespace flint::rpc
