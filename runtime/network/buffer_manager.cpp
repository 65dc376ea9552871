#include "runtime/network/buffer_manager.hpp"

#include <utility>
#include <vector>

namespace flint::network {

buffer_manager::buffer_manager(std::shared_ptr<network_buffer_pool> global,
                               std::shared_ptr<local_buffer_pool> floating_pool,
                               std::size_t num_required)
  : global_(std::move(global)),
    floating_pool_(std::move(floating_pool)),
    num_required_(num_required) {}

expected<unit> buffer_manager::request_exclusive_buffers(std::size_t count) {
  if (count == 0)
    return unit{};
  auto segments = global_->request_segments(count);
  if (!segments)
    return segments.error();
  std::lock_guard<std::mutex> guard{mutex_};
  for (auto& segment : *segments)
    exclusive_.emplace_back(std::move(segment), shared_from_this());
  return unit{};
}

std::optional<buffer> buffer_manager::request_buffer() {
  std::lock_guard<std::mutex> guard{mutex_};
  auto& queue = !floating_.empty() ? floating_ : exclusive_;
  if (queue.empty())
    return std::nullopt;
  auto out = std::move(queue.front());
  queue.pop_front();
  return out;
}

std::size_t buffer_manager::request_floating_buffers(std::size_t num_required) {
  std::size_t added = 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_ || !floating_pool_)
      return 0;
    num_required_ = num_required;
    while (exclusive_.size() + floating_.size() < num_required_ && !waiting_for_floating_) {
      if (auto next = floating_pool_->request_buffer()) {
        floating_.push_back(std::move(*next));
        ++added;
      } else if (floating_pool_->add_buffer_listener(shared_from_this())) {
        waiting_for_floating_ = true;
      }
      // Otherwise a buffer came back between the two calls: try again.
    }
  }
  return added;
}

void buffer_manager::recycle(memory_segment segment) {
  std::size_t added = 0;
  // Released outside the lock: the gate's pool may hand it straight to another channel.
  buffer surplus;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_) {
      std::vector<memory_segment> back;
      back.push_back(std::move(segment));
      global_->recycle_segments(std::move(back));
      return;
    }
    exclusive_.emplace_back(std::move(segment), shared_from_this());
    if (exclusive_.size() + floating_.size() > num_required_ && !floating_.empty()) {
      surplus = std::move(floating_.front());
      floating_.pop_front();
    } else {
      added = 1;
    }
  }
  surplus.release();
  notify_credit(added);
}

buffer_listener_result buffer_manager::notify_buffer_available(buffer& offered) {
  buffer_listener_result result;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_ || exclusive_.size() + floating_.size() >= num_required_) {
      waiting_for_floating_ = false;
      return buffer_listener_result::not_used;
    }
    floating_.push_back(std::move(offered));
    if (exclusive_.size() + floating_.size() >= num_required_) {
      waiting_for_floating_ = false;
      result = buffer_listener_result::used_no_need_more;
    } else {
      result = buffer_listener_result::used_need_more;
    }
  }
  notify_credit(1);
  return result;
}

void buffer_manager::release_all() {
  std::vector<memory_segment> exclusive;
  std::deque<buffer> floating;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    released_ = true;
    num_required_ = 0;
    for (auto& b : exclusive_)
      exclusive.push_back(b.take_segment());
    exclusive_.clear();
    floating.swap(floating_);
    on_credit_ = nullptr;
  }
  if (!exclusive.empty())
    global_->recycle_segments(std::move(exclusive));
}

void buffer_manager::set_credit_callback(credit_callback callback) {
  std::lock_guard<std::mutex> guard{mutex_};
  on_credit_ = std::move(callback);
}

void buffer_manager::notify_credit(std::size_t count) {
  if (count == 0)
    return;
  credit_callback callback;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    callback = on_credit_;
  }
  if (callback)
    callback(count);
}

std::size_t buffer_manager::num_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return exclusive_.size() + floating_.size();
}

std::size_t buffer_manager::num_exclusive_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return exclusive_.size();
}

std::size_t buffer_manager::num_floating_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return floating_.size();
}

std::size_t buffer_manager::num_required() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return num_required_;
}

bool buffer_manager::is_waiting_for_floating_buffers() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return waiting_for_floating_;
}

} // namespace flint::network
