#include "runtime/network/pipelined_subpartition.hpp"

#include "runtime/network/pipelined_subpartition_view.hpp"

#include <utility>

namespace flint::network {

pipelined_subpartition::pipelined_subpartition(std::size_t index) : result_subpartition(index) {}

bool pipelined_subpartition::add(buffer next) {
  availability_listener notify;
  // A refused buffer is released after the lock is gone: its pool may run callbacks.
  buffer refused;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (finished_ || released_) {
      refused = std::move(next);
      return false;
    }
    if (next.is_data()) {
      ++backlog_;
      ++total_data_buffers_;
    }
    if (next.kind() == buffer_kind::end_of_partition)
      finished_ = true;
    bool was_empty = buffers_.empty();
    buffers_.push_back(std::move(next));
    // Wake the reader only on the empty → non-empty edge; it polls until is_data_available is
    // false, so later buffers are seen without another wake-up.
    if (was_empty)
      notify = listener_;
  }
  if (notify)
    notify();
  return true;
}

void pipelined_subpartition::finish() {
  add(buffer::event(buffer_kind::end_of_partition));
}

void pipelined_subpartition::release() {
  std::deque<buffer> dropped;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    released_ = true;
    dropped.swap(buffers_);
    backlog_ = 0;
    listener_ = nullptr;
  }
}

expected<std::unique_ptr<result_subpartition_view>> pipelined_subpartition::create_read_view(
  availability_listener listener) {
  return std::unique_ptr<result_subpartition_view>{std::make_unique<pipelined_subpartition_view>(
    std::static_pointer_cast<pipelined_subpartition>(shared_from_this()), std::move(listener))};
}

std::optional<buffer_and_backlog> pipelined_subpartition::poll_buffer() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (buffers_.empty() || released_)
    return std::nullopt;
  buffer_and_backlog out;
  out.buf = std::move(buffers_.front());
  buffers_.pop_front();
  if (out.buf.is_data())
    --backlog_;
  out.backlog = backlog_;
  out.is_data_available = !buffers_.empty();
  out.next_is_event = !buffers_.empty() && !buffers_.front().is_data();
  return out;
}

bool pipelined_subpartition::is_available(std::size_t credits) const {
  std::lock_guard<std::mutex> guard{mutex_};
  if (buffers_.empty() || released_)
    return false;
  return credits > 0 || !buffers_.front().is_data();
}

bool pipelined_subpartition::is_data_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !buffers_.empty() && !released_;
}

void pipelined_subpartition::set_listener(availability_listener listener) {
  bool has_data = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    listener_ = listener;
    has_data = !buffers_.empty();
  }
  if (has_data && listener)
    listener();
}

void pipelined_subpartition::clear_listener() {
  std::lock_guard<std::mutex> guard{mutex_};
  listener_ = nullptr;
}

std::size_t pipelined_subpartition::backlog() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return backlog_;
}

std::size_t pipelined_subpartition::queued() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return buffers_.size();
}

bool pipelined_subpartition::is_finished() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return finished_;
}

bool pipelined_subpartition::is_released() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return released_;
}

std::size_t pipelined_subpartition::total_data_buffers() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return total_data_buffers_;
}

} // namespace flint::network
