#pragma once
/// Fills one buffer from the front (Flink's BufferBuilder, without the concurrent consumer).

#include "runtime/network/buffer.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
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
  /// Claims the next `n` bytes for the caller to write before any other call on the builder;
  /// `n` must not exceed writable(). Small claims land in a staging array that goes into the
  /// segment in one copy when it fills: the segment's cache lines were last read on the
  /// consumer's core, and record-sized stores into them each waited for a line to come back
  /// (a third of the producer's time in WordCount), where one burst overlaps the transfers.
  char* claim(std::size_t n) noexcept {
    if (staged_ + n > staging_.size()) {
      spill();
      if (n > staging_.size()) {
        char* at = target_.data() + position_;
        position_ += n;
        return at;
      }
    }
    char* at = staging_.data() + staged_;
    staged_ += n;
    position_ += n;
    return at;
  }
  /// Where the next small claims land, as one run a writer may fill with several records before
  /// it says how far it got (commit_staged): the staging array's free part, ending one byte
  /// short of a full buffer (as claim_record leaves it). Empty when there is no such room.
  std::span<char> staged_room() noexcept {
    std::size_t room = std::min(staging_.size() - staged_, writable());
    if (room <= 1)
      return {};
    return {staging_.data() + staged_, room - 1};
  }
  /// Counts the bytes from the start of staged_room() to `end` as claimed and written. No other
  /// call on the builder may come between the two.
  void commit_staged(const char* end) noexcept {
    auto n = static_cast<std::size_t>(end - (staging_.data() + staged_));
    staged_ += n;
    position_ += n;
  }
  /// Bytes written so far.
  std::size_t size() const noexcept { return position_; }
  /// Bytes still free.
  std::size_t writable() const noexcept { return target_.capacity() - position_; }
  bool is_full() const noexcept { return writable() == 0; }
  bool empty() const noexcept { return position_ == 0; }

  /// Hands over the buffer with its readable size set to what was written.
  buffer finish();

  /// The timestamp the next timestamped record starting in this buffer is coded against: the
  /// previous one's, 0 in a fresh buffer (record_serializer).
  std::int64_t timestamp_base() const noexcept { return timestamp_base_; }
  void set_timestamp_base(std::int64_t timestamp) noexcept { timestamp_base_ = timestamp; }

private:
  /// Copies the staged bytes into the segment.
  void spill() noexcept;
  buffer target_;
  std::size_t position_ = 0;
  /// Claimed bytes not yet in the segment: the last `staged_` before `position_`.
  std::size_t staged_ = 0;
  std::int64_t timestamp_base_ = 0;
  std::array<char, 4096> staging_;
};

} // namespace flint::network
