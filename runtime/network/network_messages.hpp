#pragma once
/// The messages between a producer's credit_based_view and a consumer's remote_input_channel
/// (Flink's NettyMessage kinds), as plain structs a CAF transport can carry.

#include "runtime/network/buffer.hpp"
#include "runtime/network/result_partition_id.hpp"

#include <cstddef>
#include <cstdint>

namespace flint::network {

/// Names a consumer's channel: which input gate of the consuming task, which channel in it.
/// The transport knows which task actor it belongs to.
struct input_channel_id {
  std::uint32_t gate = 0;
  std::uint32_t channel = 0;
  friend bool operator==(const input_channel_id&, const input_channel_id&) = default;
};

/// Consumer → producer: start reading `subpartition` of `partition` for `channel`, with
/// `initial_credit` credits (the channel's exclusive buffers). Flink's PartitionRequest.
struct partition_request {
  result_partition_id partition;
  std::size_t subpartition = 0;
  input_channel_id channel;
  std::size_t initial_credit = 0;
};

/// Producer → consumer: one buffer or event for `channel`. `backlog` is the number of data
/// buffers still queued behind it, so the consumer can ask for floating buffers in advance;
/// `sequence` numbers the responses of a channel from 0 to detect loss or reordering.
/// Flink's BufferResponse.
struct buffer_response {
  input_channel_id channel;
  buffer buf;
  std::size_t backlog = 0;
  std::uint64_t sequence = 0;
};

/// Consumer → producer: `credit` more buffers are free for `channel`. Flink's AddCredit.
struct add_credit {
  input_channel_id channel;
  std::size_t credit = 0;
};

} // namespace flint::network
