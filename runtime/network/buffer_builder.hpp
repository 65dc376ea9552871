#pragma once
/// Fills one buffer from the front (Flink's BufferBuilder, without the concurrent consumer).

#include "runtime/network/buffer.hpp"

#include <cstddef>
#include <span>

namespace flint::network {

/// Appends bytes into an owned buffer until it is full, then hands the buffer over.
///
/// Unlike Flink's BufferBuilder/BufferConsumer pair, nobody reads a buffer while it is being
/// filled: the writer finishes it (when full, on flush or before an event) and only then queues
/// it. A flush therefore costs a fresh buffer for the next record; at a 100 ms buffer timeout
/// that is negligible, and it keeps segments single-owner without atomics.
class buffer_builder {
public:
  /// Takes `target` and starts writing at offset 0.
  explicit buffer_builder(buffer target);

  /// Copies as much of `bytes` as fits; returns how many bytes were copied.
  std::size_t append(std::span<const char> bytes);
  /// Claims the next `n` bytes for the caller to write; `n` must not exceed writable().
  char* claim(std::size_t n) noexcept {
    char* at = target_.data() + position_;
    position_ += n;
    return at;
  }
  /// Bytes written so far.
  std::size_t size() const noexcept { return position_; }
  /// Bytes still free.
  std::size_t writable() const noexcept { return target_.capacity() - position_; }
  bool is_full() const noexcept { return writable() == 0; }
  bool empty() const noexcept { return position_ == 0; }

  /// Hands over the buffer with its readable size set to what was written.
  buffer finish();

private:
  buffer target_;
  std::size_t position_ = 0;
};

} // namespace flint::network
