#include "runtime/network/local_buffer_pool.hpp"

#include "runtime/network/network_buffer_pool.hpp"

#include <algorithm>
#include <utility>

namespace flint::network {

local_buffer_pool::local_buffer_pool(std::shared_ptr<network_buffer_pool> global, std::size_t min,
                                     std::size_t max)
  : global_(std::move(global)),
    min_(min),
    max_(max) {}

local_buffer_pool::~local_buffer_pool() {
  destroy();
}

std::size_t local_buffer_pool::segment_size() const noexcept {
  return global_->segment_size();
}

std::optional<buffer> local_buffer_pool::request_buffer() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (destroyed_)
    return std::nullopt;
  if (!available_.empty()) {
    auto segment = std::move(available_.front());
    available_.pop_front();
    return buffer{std::move(segment), shared_from_this()};
  }
  if (requested_ >= max_)
    return std::nullopt;
  auto segment = global_->request_pooled_segment(requested_ < min_);
  if (!segment)
    return std::nullopt;
  ++requested_;
  return buffer{std::move(*segment), shared_from_this()};
}

bool local_buffer_pool::is_available_locked() const {
  if (destroyed_)
    return false;
  if (!available_.empty())
    return true;
  return requested_ < max_ && global_->can_grant(requested_ < min_);
}

bool local_buffer_pool::is_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return is_available_locked();
}

bool local_buffer_pool::has_waiters() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !callbacks_.empty() || !listeners_.empty();
}

bool local_buffer_pool::notify_when_available(std::function<void()> callback) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (destroyed_ || !available_.empty())
    return false;
  // Below max the global pool may be the source, so wait there too; the check and the
  // registration happen under its lock so a segment returning in between is not missed.
  if (requested_ < max_ && global_->can_grant_or_wait(requested_ < min_, weak_from_this()))
    return false;
  callbacks_.push_back(std::move(callback));
  return true;
}

void local_buffer_pool::wake_for_half(std::size_t held_by_owner) {
  std::lock_guard<std::mutex> guard{mutex_};
  held_by_owner_ = held_by_owner;
}

bool local_buffer_pool::enough_to_wake_locked() const {
  if (!held_by_owner_)
    return true;
  auto can_return = requested_ > *held_by_owner_ ? requested_ - *held_by_owner_ : 0;
  return available_.size() >= std::max<std::size_t>(1, can_return / 2);
}

bool local_buffer_pool::add_buffer_listener(std::shared_ptr<buffer_listener> listener) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (destroyed_ || !available_.empty())
    return false;
  if (requested_ < max_ && global_->can_grant_or_wait(requested_ < min_, weak_from_this()))
    return false;
  listeners_.push_back(std::move(listener));
  return true;
}

void local_buffer_pool::recycle(memory_segment segment) {
  std::vector<std::function<void()>> callbacks;
  bool given_back = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    // Above the minimum, give the segment back when another pool is starving (Flink shrinks
    // pools by redistribution; returning on recycle reaches the same balance lazily).
    if (destroyed_ || requested_ > max_ || (requested_ > min_ && global_->has_waiters())) {
      --requested_;
      global_->recycle_pooled_segment(std::move(segment));
      given_back = true;
      // Fewer buffers can come back now: the gathered ones may be enough for the waiters.
      if (!destroyed_ && !available_.empty() && enough_to_wake_locked())
        callbacks = take_callbacks_locked();
    }
  }
  if (given_back) {
    for (auto& callback : callbacks)
      callback();
    return;
  }
  offer(std::move(segment));
}

void local_buffer_pool::offer(memory_segment segment) {
  // The listener gets a buffer that still recycles here, so its later release comes back.
  buffer offered{std::move(segment), shared_from_this()};
  for (;;) {
    std::shared_ptr<buffer_listener> listener;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (listeners_.empty() || destroyed_)
        break;
      listener = std::move(listeners_.front());
      listeners_.pop_front();
    }
    auto result = listener->notify_buffer_available(offered);
    if (result == buffer_listener_result::used_need_more) {
      std::lock_guard<std::mutex> guard{mutex_};
      listeners_.push_back(std::move(listener));
    }
    if (result != buffer_listener_result::not_used)
      return;
  }
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto back = offered.take_segment();
    if (destroyed_) {
      --requested_;
      global_->recycle_pooled_segment(std::move(back));
      return;
    }
    available_.push_back(std::move(back));
    if (enough_to_wake_locked())
      callbacks = take_callbacks_locked();
  }
  for (auto& callback : callbacks)
    callback();
}

std::vector<std::function<void()>> local_buffer_pool::take_callbacks_locked() {
  std::vector<std::function<void()>> out;
  out.swap(callbacks_);
  return out;
}

void local_buffer_pool::on_global_segment_available() {
  bool has_listeners = false;
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (destroyed_)
      return;
    has_listeners = !listeners_.empty();
    callbacks = take_callbacks_locked();
  }
  if (has_listeners) {
    // Listeners wait for a buffer, not a hint: fetch one for them.
    std::optional<memory_segment> segment;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (!destroyed_ && requested_ < max_) {
        segment = global_->request_or_wait(requested_ < min_, weak_from_this());
        if (segment)
          ++requested_;
      }
    }
    if (segment)
      offer(std::move(*segment));
  }
  for (auto& callback : callbacks)
    callback();
}

void local_buffer_pool::destroy() {
  std::vector<memory_segment> idle;
  std::vector<std::function<void()>> callbacks;
  std::size_t unmet = 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (destroyed_)
      return;
    destroyed_ = true;
    unmet = requested_ < min_ ? min_ - requested_ : 0;
    for (auto& segment : available_)
      idle.push_back(std::move(segment));
    available_.clear();
    requested_ -= idle.size();
    listeners_.clear();
    callbacks = take_callbacks_locked();
  }
  global_->unregister_pool(min_, unmet, std::move(idle));
  for (auto& callback : callbacks)
    callback();
}

bool local_buffer_pool::is_destroyed() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return destroyed_;
}

std::size_t local_buffer_pool::num_requested() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return requested_;
}

std::size_t local_buffer_pool::num_available() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return available_.size();
}

std::size_t local_buffer_pool::num_in_use() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return requested_ - available_.size();
}

} // namespace flint::network
