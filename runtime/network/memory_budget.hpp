#pragma once
/// A byte limit several owners take from (the heap that blocking partitions may keep).

#include <atomic>
#include <cstddef>

namespace flint::network {

/// Thread-safe: any thread reserves and gives back. Nothing is allocated here; owners allocate
/// what they reserved.
class memory_budget {
public:
  explicit memory_budget(std::size_t limit) : limit_(limit) {}
  memory_budget(const memory_budget&) = delete;
  memory_budget& operator=(const memory_budget&) = delete;

  /// Takes `bytes` if they fit under the limit; false (nothing taken) otherwise.
  bool try_reserve(std::size_t bytes) noexcept {
    auto now = reserved_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ || now > limit_ - bytes)
        return false;
    } while (!reserved_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
    return true;
  }
  /// Gives back `bytes` reserved earlier.
  void release(std::size_t bytes) noexcept {
    reserved_.fetch_sub(bytes, std::memory_order_relaxed);
  }

  std::size_t limit() const noexcept { return limit_; }
  std::size_t reserved() const noexcept { return reserved_.load(std::memory_order_relaxed); }

private:
  const std::size_t limit_;
  std::atomic<std::size_t> reserved_{0};
};

} // namespace flint::network
