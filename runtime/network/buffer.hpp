#pragma once
/// A network buffer: a memory segment with a readable size and a kind (Flink's NetworkBuffer).

#include "runtime/network/buffer_recycler.hpp"
#include "runtime/network/memory_segment.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace flint::network {

/// What a buffer carries. Events travel as buffers of their own kind so that they keep their
/// place in the stream and pass without credit.
enum class buffer_kind : std::uint8_t {
  /// Serialized records (length-prefixed, possibly spanning buffers).
  data = 0,
  /// The producer finished this subpartition; nothing follows.
  end_of_partition = 1,
  /// A checkpoint barrier (checkpoint_barrier.hpp): its id and timestamp are the payload.
  checkpoint_barrier = 2,
  /// A watermark (stream_events.hpp): event time up to which the producer's records are complete.
  watermark = 3,
  /// The producer's watermark status (idle or active, Flink's WatermarkStatus).
  watermark_status = 4,
  /// The producer ends its data (Flink's EndOfData): 1 payload byte, 1 when it drained (its
  /// event time ran to the end), 0 when it stopped with a savepoint without draining.
  end_of_data = 5,
};

/// Human-readable name of a kind ("data", "end_of_partition", "checkpoint_barrier").
const char* to_string(buffer_kind kind);

/// Owns a segment until released; then the segment goes back to its recycler (RAII). Move-only,
/// so a buffer is handed from producer to consumer without copying its bytes.
class buffer {
public:
  /// An empty handle (no segment).
  buffer() = default;
  /// Wraps `segment` (readable size 0); `recycler` may be null for unpooled memory.
  buffer(memory_segment segment, std::shared_ptr<buffer_recycler> recycler,
         buffer_kind kind = buffer_kind::data);

  /// Heap memory outside every pool, freed on release: events and bytes a transport received.
  static buffer unpooled(std::size_t capacity, buffer_kind kind = buffer_kind::data);
  /// An event buffer (no payload).
  static buffer event(buffer_kind kind);
  /// An unpooled buffer holding a copy of `bytes`: what a transport builds from bytes it received.
  static buffer unpooled_copy(std::span<const char> bytes, buffer_kind kind = buffer_kind::data);

  buffer(buffer&& other) noexcept;
  buffer& operator=(buffer&& other) noexcept;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  ~buffer();

  /// True while the buffer holds a segment or is an event.
  explicit operator bool() const noexcept {
    return static_cast<bool>(segment_) || kind_ != buffer_kind::data;
  }

  buffer_kind kind() const noexcept { return kind_; }
  /// True for data buffers (Flink's isBuffer), false for events.
  bool is_data() const noexcept { return kind_ == buffer_kind::data; }

  char* data() noexcept { return segment_.data(); }
  const char* data() const noexcept { return segment_.data(); }
  /// Readable bytes.
  std::size_t size() const noexcept { return size_; }
  /// Bytes the segment holds.
  std::size_t capacity() const noexcept { return segment_.size(); }
  /// Sets the readable size; must not exceed the capacity.
  void set_size(std::size_t size);
  /// The readable bytes.
  std::span<const char> bytes() const noexcept { return {segment_.data(), size_}; }

  /// The recycler the segment returns to (null when unpooled).
  const buffer_recycler* recycler() const noexcept { return recycler_.get(); }

  /// Returns the segment to its recycler now; the handle becomes empty.
  void release();
  /// Detaches the segment without recycling it (the caller now owns it).
  memory_segment take_segment();
  /// Puts `replacement` (of the same size) in place of the segment, which it returns; the
  /// recycler and the kind stay, the readable size is 0. A transport puts the memory it received
  /// into a credited buffer this way instead of copying the bytes.
  memory_segment exchange_segment(memory_segment replacement);

private:
  memory_segment segment_;
  std::shared_ptr<buffer_recycler> recycler_;
  std::size_t size_ = 0;
  buffer_kind kind_ = buffer_kind::data;
};

} // namespace flint::network
