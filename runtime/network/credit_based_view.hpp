#pragma once
/// The producer side of one remote channel (Flink's CreditBasedSequenceNumberingViewReader).

#include "runtime/network/network_messages.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace flint::network {

/// Sends a subpartition's buffers to one remote consumer, never more data buffers than the
/// consumer has granted credit for (events pass without credit), each stamped with the backlog
/// behind it and a sequence number. Single-threaded: the transport owning it calls it; the
/// subpartition's data listener (given when creating the view) tells the transport to try again.
class credit_based_view {
public:
  /// Reads `view` for `channel`, starting with `initial_credit` credits.
  credit_based_view(input_channel_id channel, std::unique_ptr<result_subpartition_view> view,
                    std::size_t initial_credit);

  /// The consumer freed `credit` buffers.
  void add_credit(std::size_t credit);
  /// Applies an add_credit message; ignores one for another channel.
  void on_add_credit(const network::add_credit& message);
  /// True when next_response would return something now.
  bool is_available() const;
  /// The next message to send, if credit and data allow.
  std::optional<buffer_response> next_response();
  /// True when a data buffer waits and there is no credit to send it.
  bool waits_for_credit() const { return view_ && credits_ == 0 && view_->is_available(1); }
  /// Stops reading.
  void release();

  /// True once end-of-partition went out: nothing follows and the transport may drop the view.
  bool is_finished() const noexcept { return finished_; }
  input_channel_id channel() const noexcept { return channel_; }
  std::size_t credits() const noexcept { return credits_; }
  /// Data buffers sent so far.
  std::uint64_t data_buffers_sent() const noexcept { return data_sent_; }
  /// Next sequence number.
  std::uint64_t sequence() const noexcept { return sequence_; }

private:
  input_channel_id channel_;
  std::unique_ptr<result_subpartition_view> view_;
  std::size_t credits_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t data_sent_ = 0;
  bool finished_ = false;
};

} // namespace flint::network
