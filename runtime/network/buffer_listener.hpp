#pragma once
/// Waits for a pool to hand it a buffer as soon as one is recycled (Flink's BufferListener).

#include "runtime/network/buffer.hpp"

namespace flint::network {

/// What a listener did with an offered buffer.
enum class buffer_listener_result {
  /// The buffer was not taken; the pool offers it to the next listener or keeps it.
  not_used,
  /// Taken; the listener needs no more and is dropped from the pool's list.
  used_no_need_more,
  /// Taken; the listener stays registered for more.
  used_need_more,
};

/// Registered with a local_buffer_pool that had nothing to give; the pool offers it the next
/// recycled buffer directly. Called on the recycling thread with no pool lock held.
class buffer_listener {
public:
  virtual ~buffer_listener() = default;
  /// Offers `offered`; a listener that takes it moves it out.
  virtual buffer_listener_result notify_buffer_available(buffer& offered) = 0;
};

} // namespace flint::network
