#pragma once
/// The inputs of one consuming task from one intermediate result (Flink's SingleInputGate).

#include "runtime/common/expected.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/input_channel.hpp"
#include "runtime/network/local_buffer_pool.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace flint::network {

/// A buffer or event from one of the gate's channels.
struct buffer_or_event {
  buffer buf;
  /// Index of the channel it came from.
  std::size_t channel = 0;
  /// The gate has more right now.
  bool more_available = false;

  bool is_event() const noexcept { return !buf.is_data(); }
};

/// Merges its channels: a channel that reports data joins a queue, and poll_next serves the queue
/// round robin, one buffer per turn, so no producer starves the others. Counts end-of-partition
/// events and is finished when every channel has ended. Never blocks: when nothing is queued the
/// owner waits for the availability listener.
///
/// poll_next is called by the consuming task only; channels report data from any thread.
class input_gate {
public:
  /// Gate number `gate_index` of its task; `floating_pool` (Flink: floating-buffers-per-gate)
  /// feeds the remote channels' floating buffers and may be null when all channels are local.
  input_gate(std::size_t gate_index, std::shared_ptr<local_buffer_pool> floating_pool);
  ~input_gate();
  input_gate(const input_gate&) = delete;
  input_gate& operator=(const input_gate&) = delete;

  /// Adds the next channel; its channel_index must equal the number of channels added so far.
  void add_channel(std::unique_ptr<input_channel> channel);
  /// Runs setup on every channel (exclusive buffers).
  expected<unit> setup();
  /// Requests every channel's subpartition.
  expected<unit> request_partitions();

  /// The next buffer or event, round robin over channels with data; nothing if none is queued.
  /// End-of-partition is returned too (after the channel is marked ended and released).
  std::optional<buffer_or_event> poll_next();
  /// True once every channel delivered end-of-partition.
  bool is_finished() const;
  /// True while some channel is queued with data.
  bool has_data() const;
  /// Called when the gate goes from no queued channel to one. It may run on any thread; the
  /// owner typically sends itself a message and then polls. It is not called again while
  /// channels stay queued: keep polling while `more_available` says so.
  void set_availability_listener(availability_listener listener);

  /// Releases every channel and the floating pool.
  void release();

  std::size_t gate_index() const noexcept { return gate_index_; }
  std::size_t num_channels() const noexcept { return channels_.size(); }
  input_channel& channel(std::size_t index) { return *channels_.at(index); }
  std::size_t num_ended_channels() const;

  /// Holds channel `index` (a checkpoint alignment): poll_next skips it, its data waits.
  void block_channel(std::size_t index);
  /// Reads channel `index` again; data that arrived while it was held is polled next.
  void resume_channel(std::size_t index);
  bool is_blocked(std::size_t index) const;
  const std::shared_ptr<local_buffer_pool>& floating_pool() const noexcept {
    return floating_pool_;
  }

private:
  /// The queue of channels with data. Shared with the channels' listeners so that a producer
  /// thread that is just notifying never touches a gate being destroyed.
  struct queue_state;

  const std::size_t gate_index_;
  std::shared_ptr<local_buffer_pool> floating_pool_;
  std::vector<std::unique_ptr<input_channel>> channels_;
  std::shared_ptr<queue_state> state_;
};

} // namespace flint::network
