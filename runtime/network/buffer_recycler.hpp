#pragma once
/// Where a buffer's segment goes when the buffer is released (Flink's BufferRecycler).

#include "runtime/network/memory_segment.hpp"

namespace flint::network {

/// Takes back the segment of a released buffer. Implementations are thread-safe: a buffer may be
/// released on any thread (a local consumer releases the producer's buffers).
class buffer_recycler {
public:
  virtual ~buffer_recycler() = default;
  /// Receives ownership of `segment`.
  virtual void recycle(memory_segment segment) = 0;
};

} // namespace flint::network
