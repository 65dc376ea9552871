#pragma once
/// One input of an input gate: reads one subpartition of one producer (Flink's InputChannel).

#include "runtime/common/expected.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/result_partition_id.hpp"

#include <cstddef>
#include <optional>

namespace flint::network {

/// A buffer or event taken from a channel.
struct buffer_and_availability {
  buffer buf;
  /// The channel has more right now.
  bool more_available = false;
  /// Data buffers the producer still had queued (as last announced).
  std::size_t backlog = 0;
};

/// The consumer side of one subpartition. The gate installs its data listener before the
/// subpartition is requested; a channel calls it when its queue turns non-empty.
class input_channel {
public:
  /// Channel number `channel_index` of its gate, reading `subpartition` of `partition`.
  input_channel(std::size_t channel_index, result_partition_id partition, std::size_t subpartition);
  virtual ~input_channel();
  input_channel(const input_channel&) = delete;
  input_channel& operator=(const input_channel&) = delete;

  /// Acquires what the channel needs before data flows (exclusive buffers for remote ones).
  virtual expected<unit> setup();
  /// Starts consumption of the subpartition.
  virtual expected<unit> request_subpartition() = 0;
  /// The next buffer or event, if one is there; never blocks.
  virtual std::optional<buffer_and_availability> get_next_buffer() = 0;
  /// Drops queued buffers and returns every buffer the channel holds.
  virtual void release() = 0;
  virtual bool is_released() const = 0;

  /// Installed by the gate (before request_subpartition; not changed afterwards).
  void set_data_listener(availability_listener listener) { data_listener_ = std::move(listener); }

  std::size_t channel_index() const noexcept { return channel_index_; }
  const result_partition_id& partition_id() const noexcept { return partition_; }
  std::size_t subpartition_index() const noexcept { return subpartition_; }

protected:
  /// Tells the gate this channel has data.
  void notify_channel_non_empty() const;
  /// The gate's listener, for channels that hand it to a producer thread directly.
  const availability_listener& data_listener() const noexcept { return data_listener_; }

private:
  const std::size_t channel_index_;
  const result_partition_id partition_;
  const std::size_t subpartition_;
  availability_listener data_listener_;
};

} // namespace flint::network
