#include "runtime/network/bounded_blocking_subpartition_reader.hpp"

#include "runtime/network/buffer_recycler.hpp"

#include <mutex>
#include <utility>
#include <vector>

namespace flint::network {

/// At most `limit` segments of `size` bytes: handed out in buffers, recycled here. When the
/// reader found none free it is "starved", and the next recycled segment wakes its listener.
class bounded_blocking_subpartition_reader::read_buffers final : public buffer_recycler {
public:
  read_buffers(std::size_t limit, availability_listener listener)
    : limit_(limit),
      listener_(std::move(listener)) {}

  /// A free segment of at least `size` bytes, or nothing (then the reader is starved).
  std::optional<memory_segment> take(std::size_t size) {
    std::lock_guard<std::mutex> guard{mutex_};
    while (!free_.empty()) {
      auto segment = std::move(free_.back());
      free_.pop_back();
      if (segment.size() >= size)
        return segment;
      --made_; // too small (never, as sizes are fixed at finish): drop it
    }
    if (made_ < limit_) {
      ++made_;
      return memory_segment{size};
    }
    starved_ = true;
    return std::nullopt;
  }

  /// True when take() would give a segment; otherwise marks the reader starved.
  bool has_free() {
    std::lock_guard<std::mutex> guard{mutex_};
    if (!free_.empty() || made_ < limit_)
      return true;
    starved_ = true;
    return false;
  }

  void recycle(memory_segment segment) override {
    availability_listener notify;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (closed_) {
        --made_;
        return; // freed with `segment`
      }
      free_.push_back(std::move(segment));
      if (starved_) {
        starved_ = false;
        notify = listener_;
      }
    }
    if (notify)
      notify();
  }

  /// The reader is gone: segments out there are freed when they come back.
  void close() {
    std::vector<memory_segment> dropped;
    std::lock_guard<std::mutex> guard{mutex_};
    closed_ = true;
    listener_ = nullptr;
    made_ -= free_.size();
    dropped.swap(free_);
  }

private:
  const std::size_t limit_;
  std::mutex mutex_;
  std::vector<memory_segment> free_;
  std::size_t made_ = 0;
  bool starved_ = false;
  bool closed_ = false;
  availability_listener listener_;
};

bounded_blocking_subpartition_reader::bounded_blocking_subpartition_reader(
  std::shared_ptr<bounded_blocking_subpartition> parent, availability_listener listener,
  std::size_t num_read_buffers)
  : parent_(std::move(parent)),
    buffers_(
      std::make_shared<read_buffers>(num_read_buffers == 0 ? 1 : num_read_buffers, listener)),
    id_(parent_->attach_reader()) {
  // Before finish nothing can be read: the parent wakes the listener once it is finished.
  if (parent_->notify_when_finished(id_, listener))
    return;
  // Finished (or released): there is always something to read, at least end-of-partition.
  if (listener)
    listener();
}

bounded_blocking_subpartition_reader::~bounded_blocking_subpartition_reader() {
  release_all_resources();
}

bool bounded_blocking_subpartition_reader::ready() const {
  if (!ready_ && parent_->is_finished()) {
    ready_ = true;
    total_ = parent_->total_data_buffers();
  }
  return ready_;
}

std::optional<buffer_and_backlog> bounded_blocking_subpartition_reader::get_next_buffer() {
  if (released_ || failure_ || !ready())
    return std::nullopt;
  if (next_ == total_) {
    if (end_sent_)
      return std::nullopt;
    end_sent_ = true;
    buffer_and_backlog out;
    out.buf = buffer::event(buffer_kind::end_of_partition);
    return out;
  }
  auto segment = buffers_->take(parent_->max_buffer_size());
  if (!segment)
    return std::nullopt;
  auto size = parent_->read(next_, file_offset_, segment->data());
  if (!size) {
    // Released under the reader (the job's partitions went) or an I/O error: nothing follows.
    failure_ = size.error();
    return std::nullopt;
  }
  ++next_;
  buffer_and_backlog out;
  out.buf = buffer{std::move(*segment), buffers_, buffer_kind::data};
  out.buf.set_size(*size);
  out.backlog = total_ - next_;
  out.next_is_event = next_ == total_;
  // End-of-partition needs no read buffer; data waits for one to come back.
  out.is_data_available = out.next_is_event || buffers_->has_free();
  return out;
}

bool bounded_blocking_subpartition_reader::is_available(std::size_t credits) const {
  if (released_ || failure_ || !ready())
    return false;
  if (next_ == total_)
    return !end_sent_;
  return credits > 0 && buffers_->has_free();
}

std::size_t bounded_blocking_subpartition_reader::backlog() const {
  return ready() ? total_ - next_ : parent_->total_data_buffers();
}

void bounded_blocking_subpartition_reader::release_all_resources() {
  if (released_)
    return;
  released_ = true;
  buffers_->close();
  parent_->forget_reader(id_);
}

} // namespace flint::network
