#include "runtime/network/buffer.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace flint::network {

const char* to_string(buffer_kind kind) {
  switch (kind) {
    case buffer_kind::data: return "data";
    case buffer_kind::end_of_partition: return "end_of_partition";
    case buffer_kind::checkpoint_barrier: return "checkpoint_barrier";
    case buffer_kind::watermark: return "watermark";
    case buffer_kind::watermark_status: return "watermark_status";
    case buffer_kind::end_of_data: return "end_of_data";
  }
  return "unknown";
}

buffer::buffer(memory_segment segment, std::shared_ptr<buffer_recycler> recycler, buffer_kind kind)
  : segment_(std::move(segment)),
    recycler_(std::move(recycler)),
    kind_(kind) {}

buffer buffer::unpooled(std::size_t capacity, buffer_kind kind) {
  return buffer{memory_segment{capacity}, nullptr, kind};
}

buffer buffer::unpooled_copy(std::span<const char> bytes, buffer_kind kind) {
  if (bytes.empty() && kind != buffer_kind::data)
    return event(kind);
  auto out = unpooled(bytes.size(), kind);
  if (!bytes.empty())
    std::memcpy(out.data(), bytes.data(), bytes.size());
  out.set_size(bytes.size());
  return out;
}

buffer buffer::event(buffer_kind kind) {
  return buffer{memory_segment{}, nullptr, kind};
}

buffer::buffer(buffer&& other) noexcept
  : segment_(std::move(other.segment_)),
    recycler_(std::move(other.recycler_)),
    size_(std::exchange(other.size_, 0)),
    kind_(std::exchange(other.kind_, buffer_kind::data)) {}

buffer& buffer::operator=(buffer&& other) noexcept {
  if (this != &other) {
    release();
    segment_ = std::move(other.segment_);
    recycler_ = std::move(other.recycler_);
    size_ = std::exchange(other.size_, 0);
    kind_ = std::exchange(other.kind_, buffer_kind::data);
  }
  return *this;
}

buffer::~buffer() {
  release();
}

void buffer::set_size(std::size_t size) {
  if (size > segment_.size())
    throw std::logic_error("buffer size beyond its segment");
  size_ = size;
}

void buffer::release() {
  auto recycler = std::move(recycler_);
  recycler_ = nullptr;
  if (segment_ && recycler)
    recycler->recycle(std::move(segment_));
  segment_ = memory_segment{};
  size_ = 0;
  kind_ = buffer_kind::data;
}

memory_segment buffer::exchange_segment(memory_segment replacement) {
  if (replacement.size() != segment_.size())
    throw std::logic_error("buffer: a replacement segment must have the segment's size");
  size_ = 0;
  return std::exchange(segment_, std::move(replacement));
}

memory_segment buffer::take_segment() {
  recycler_ = nullptr;
  size_ = 0;
  return std::move(segment_);
}

} // namespace flint::network
