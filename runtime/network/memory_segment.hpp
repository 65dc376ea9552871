#pragma once
/// A fixed-size block of network memory (Flink's MemorySegment).

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace flint::network {

/// Owns one block of bytes. Move-only: a segment has exactly one owner at any time, which is how
/// buffer ownership moves between producer and consumer without copies.
class memory_segment {
public:
  memory_segment() = default;
  /// Allocates `size` bytes (uninitialised: network buffers are always written before read).
  explicit memory_segment(std::size_t size)
    : owned_(new char[size]),
      data_(owned_.get()),
      size_(size) {}

  /// Takes the storage of `bytes` as the segment's (no copy): a transport received the bytes into
  /// a vector, and the vector's memory becomes the buffer's. An empty vector gives an empty
  /// segment.
  static memory_segment adopt(std::vector<char>&& bytes) {
    memory_segment out;
    if (bytes.empty())
      return out;
    out.adopted_ = std::move(bytes);
    out.data_ = out.adopted_.data();
    out.size_ = out.adopted_.size();
    return out;
  }

  memory_segment(memory_segment&& other) noexcept
    : owned_(std::move(other.owned_)),
      adopted_(std::move(other.adopted_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}
  memory_segment& operator=(memory_segment&& other) noexcept {
    owned_ = std::move(other.owned_);
    adopted_ = std::move(other.adopted_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  memory_segment(const memory_segment&) = delete;
  memory_segment& operator=(const memory_segment&) = delete;

  /// False for a moved-from or default-constructed segment.
  explicit operator bool() const noexcept { return data_ != nullptr; }
  char* data() noexcept { return data_; }
  const char* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

private:
  /// One of the two holds the bytes: memory allocated for the segment, or a vector adopted.
  std::unique_ptr<char[]> owned_;
  std::vector<char> adopted_;
  /// A moved vector keeps its storage, so the pointer stays valid across moves.
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace flint::network
