#pragma once
/// A buffer taken from a subpartition with the state of what stays behind it.

#include "runtime/network/buffer.hpp"

#include <cstddef>

namespace flint::network {

/// One polled buffer (Flink's ResultSubpartition.BufferAndBacklog).
struct buffer_and_backlog {
  buffer buf;
  /// More can be polled right now.
  bool is_data_available = false;
  /// Data buffers still queued behind this one: what the consumer should prepare credit for.
  std::size_t backlog = 0;
  /// The next queued buffer is an event (passes without credit).
  bool next_is_event = false;
};

} // namespace flint::network
