#pragma once
#include <chrono>

namespace flint::rpc {

/// RPC settings shared by every endpoint of a node (Flink's `rpc.*` / `akka.*` keys).
struct rpc_config {
  /// `rpc.ask.timeout`: how long an ask waits for its answer.
  std::chrono::nanoseconds ask_timeout = std::chrono::seconds(10);
  /// `rpc.max-frame-size` (Flink's akka.framesize): the largest call an endpoint accepts;
  /// larger ones are refused unread, with the sizes named.
  std::size_t max_frame_size = 128u << 20;
};

} // namespace flint::rpc
