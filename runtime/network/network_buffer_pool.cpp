#include "runtime/network/network_buffer_pool.hpp"

#include "runtime/network/local_buffer_pool.hpp"

#include <string>
#include <utility>

namespace flint::network {

std::shared_ptr<network_buffer_pool> network_buffer_pool::make(std::size_t num_segments,
                                                               std::size_t segment_size) {
  return std::make_shared<network_buffer_pool>(num_segments, segment_size);
}

network_buffer_pool::network_buffer_pool(std::size_t num_segments, std::size_t segment_size)
  : total_(num_segments),
    segment_size_(segment_size) {}

expected<std::shared_ptr<local_buffer_pool>> network_buffer_pool::create_buffer_pool(
  std::size_t min, std::size_t max) {
  if (max < min || max == 0)
    return make_error(errc::invalid_argument,
                      "a local buffer pool needs 0 < max and min <= max, got min "
                        + std::to_string(min) + " max " + std::to_string(max));
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (required_ + min > total_)
      return make_error(errc::rejected,
                        "insufficient number of network buffers: required " + std::to_string(min)
                          + ", but only " + std::to_string(total_ - required_)
                          + " available; the total number of network buffers is "
                          + std::to_string(total_) + " of " + std::to_string(segment_size_)
                          + " bytes each (raise taskmanager.memory.network.max)");
    required_ += min;
    unmet_minimums_ += min;
  }
  return std::make_shared<local_buffer_pool>(shared_from_this(), min, max);
}

expected<std::vector<memory_segment>> network_buffer_pool::request_segments(std::size_t count) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (required_ + count > total_)
    return make_error(errc::rejected,
                      "insufficient number of network buffers: required " + std::to_string(count)
                        + " exclusive, but only " + std::to_string(total_ - required_)
                        + " available; the total number of network buffers is "
                        + std::to_string(total_) + " (raise taskmanager.memory.network.max)");
  auto free = total_ - handed_out_;
  if (free < unmet_minimums_ + count)
    return make_error(errc::rejected,
                      "network buffers are lent to other pools right now: needed "
                        + std::to_string(count) + " exclusive, " + std::to_string(free) + " free, "
                        + std::to_string(unmet_minimums_) + " reserved");
  required_ += count;
  std::vector<memory_segment> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    out.push_back(take_locked());
  return out;
}

void network_buffer_pool::recycle_segments(std::vector<memory_segment> segments) {
  std::deque<std::weak_ptr<local_buffer_pool>> waiters;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    for (auto& segment : segments) {
      free_.push_back(std::move(segment));
      --handed_out_;
      --required_;
    }
    waiters.swap(waiters_);
  }
  notify_waiters(std::move(waiters));
}

std::size_t network_buffer_pool::available_segments() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return total_ - handed_out_;
}

std::size_t network_buffer_pool::allocated_segments() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return allocated_;
}

std::size_t network_buffer_pool::required_segments() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return required_;
}

bool network_buffer_pool::can_grant_locked(bool guaranteed) const {
  auto free = total_ - handed_out_;
  return guaranteed ? free > 0 : free > unmet_minimums_;
}

memory_segment network_buffer_pool::take_locked() {
  ++handed_out_;
  if (!free_.empty()) {
    auto segment = std::move(free_.back());
    free_.pop_back();
    return segment;
  }
  ++allocated_;
  return memory_segment{segment_size_};
}

std::optional<memory_segment> network_buffer_pool::request_pooled_segment(bool guaranteed) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!can_grant_locked(guaranteed))
    return std::nullopt;
  if (guaranteed)
    --unmet_minimums_;
  return take_locked();
}

std::optional<memory_segment> network_buffer_pool::request_or_wait(
  bool guaranteed, const std::weak_ptr<local_buffer_pool>& waiter) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!can_grant_locked(guaranteed)) {
    waiters_.push_back(waiter);
    return std::nullopt;
  }
  if (guaranteed)
    --unmet_minimums_;
  return take_locked();
}

bool network_buffer_pool::can_grant(bool guaranteed) const {
  std::lock_guard<std::mutex> guard{mutex_};
  return can_grant_locked(guaranteed);
}

bool network_buffer_pool::can_grant_or_wait(bool guaranteed,
                                            const std::weak_ptr<local_buffer_pool>& waiter) {
  std::lock_guard<std::mutex> guard{mutex_};
  if (can_grant_locked(guaranteed))
    return true;
  waiters_.push_back(waiter);
  return false;
}

void network_buffer_pool::recycle_pooled_segment(memory_segment segment) {
  std::deque<std::weak_ptr<local_buffer_pool>> waiters;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    free_.push_back(std::move(segment));
    --handed_out_;
    waiters.swap(waiters_);
  }
  notify_waiters(std::move(waiters));
}

bool network_buffer_pool::has_waiters() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !waiters_.empty();
}

void network_buffer_pool::unregister_pool(std::size_t min, std::size_t unmet,
                                          std::vector<memory_segment> returned) {
  std::deque<std::weak_ptr<local_buffer_pool>> waiters;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    required_ -= min;
    unmet_minimums_ -= unmet;
    for (auto& segment : returned) {
      free_.push_back(std::move(segment));
      --handed_out_;
    }
    waiters.swap(waiters_);
  }
  notify_waiters(std::move(waiters));
}

void network_buffer_pool::notify_waiters(std::deque<std::weak_ptr<local_buffer_pool>> waiters) {
  // Every waiter retries; one that loses the race registers again. Pools are few per
  // TaskExecutor, so waking all is cheaper than tracking who could use which segment.
  for (auto& weak : waiters)
    if (auto pool = weak.lock())
      pool->on_global_segment_available();
}

} // namespace flint::network
