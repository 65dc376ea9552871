#pragma once
/// A fixed-size block of network memory (Flink's MemorySegment).

#include <cstddef>
#include <memory>

namespace flint::network {

/// Owns one block of bytes. Move-only: a segment has exactly one owner at any time, which is how
/// buffer ownership moves between producer and consumer without copies.
class memory_segment {
public:
  memory_segment() = default;
  /// Allocates `size` bytes (uninitialised: network buffers are always written before read).
  explicit memory_segment(std::size_t size) : data_(new char[size]), size_(size) {}

  memory_segment(memory_segment&& other) noexcept
    : data_(std::move(other.data_)),
      size_(other.size_) {
    other.size_ = 0;
  }
  memory_segment& operator=(memory_segment&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = other.size_;
    other.size_ = 0;
    return *this;
  }
  memory_segment(const memory_segment&) = delete;
  memory_segment& operator=(const memory_segment&) = delete;

  /// False for a moved-from or default-constructed segment.
  explicit operator bool() const noexcept { return data_ != nullptr; }
  char* data() noexcept { return data_.get(); }
  const char* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
};

} // namespace flint::network
