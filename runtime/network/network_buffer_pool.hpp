#pragma once
/// The TaskExecutor-wide pool of network segments (Flink's NetworkBufferPool).

#include "runtime/common/expected.hpp"
#include "runtime/network/memory_segment.hpp"

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace flint::network {

class local_buffer_pool;

/// A fixed number of equally sized segments, shared by every partition and gate of one
/// TaskExecutor. Thread-safe. Segments are allocated on first use and kept afterwards, so the
/// configured budget bounds memory without being paid up front.
///
/// Each local pool is guaranteed its minimum: the pool refuses to create local pools whose minimums
/// (plus exclusive channel buffers) exceed the total, and hands a local pool segments beyond its
/// minimum only while enough free segments stay for every other pool's unmet minimum.
class network_buffer_pool : public std::enable_shared_from_this<network_buffer_pool> {
public:
  /// A pool of `num_segments` segments of `segment_size` bytes each.
  static std::shared_ptr<network_buffer_pool> make(std::size_t num_segments,
                                                   std::size_t segment_size);

  network_buffer_pool(std::size_t num_segments, std::size_t segment_size);
  network_buffer_pool(const network_buffer_pool&) = delete;
  network_buffer_pool& operator=(const network_buffer_pool&) = delete;

  /// A local pool that may hold between `min` and `max` segments. Fails when the minimums of
  /// all pools and the exclusive buffers would exceed the total.
  expected<std::shared_ptr<local_buffer_pool>> create_buffer_pool(std::size_t min, std::size_t max);

  /// `count` segments for one channel's exclusive use (Flink's requestMemorySegments); return
  /// them with recycle_segments.
  expected<std::vector<memory_segment>> request_segments(std::size_t count);
  /// Takes back exclusive segments.
  void recycle_segments(std::vector<memory_segment> segments);

  std::size_t segment_size() const noexcept { return segment_size_; }
  std::size_t total_segments() const noexcept { return total_; }
  /// Segments not held by any local pool or channel.
  std::size_t available_segments() const;
  /// Segments ever allocated (the pool's memory footprint).
  std::size_t allocated_segments() const;
  /// Sum of all local pool minimums plus exclusive segments handed out.
  std::size_t required_segments() const;

private:
  friend class local_buffer_pool;

  /// A segment for a local pool; `guaranteed` when the pool is still below its minimum.
  std::optional<memory_segment> request_pooled_segment(bool guaranteed);
  /// Like request_pooled_segment, but on failure registers `waiter` in the same critical section
  /// so that no recycle slips between the check and the registration.
  std::optional<memory_segment> request_or_wait(bool guaranteed,
                                                const std::weak_ptr<local_buffer_pool>& waiter);
  /// True if a request would succeed now.
  bool can_grant(bool guaranteed) const;
  /// True if a request would succeed now; otherwise registers `waiter` atomically.
  bool can_grant_or_wait(bool guaranteed, const std::weak_ptr<local_buffer_pool>& waiter);
  /// A local pool returns a segment it holds beyond its minimum (or after it was destroyed).
  void recycle_pooled_segment(memory_segment segment);
  /// True while some local pool waits for a segment.
  bool has_waiters() const;
  /// A local pool with `min` went away; `unmet` of its minimum was never requested.
  void unregister_pool(std::size_t min, std::size_t unmet, std::vector<memory_segment> returned);

  bool can_grant_locked(bool guaranteed) const;
  memory_segment take_locked();
  /// Runs the waiters' callbacks; called with no lock held.
  void notify_waiters(std::deque<std::weak_ptr<local_buffer_pool>> waiters);

  const std::size_t total_;
  const std::size_t segment_size_;
  mutable std::mutex mutex_;
  std::vector<memory_segment> free_;
  std::size_t handed_out_ = 0;
  std::size_t allocated_ = 0;
  std::size_t required_ = 0;
  /// Sum over live local pools of (min - requested) where positive: free segments that must stay
  /// available to guaranteed requests.
  std::size_t unmet_minimums_ = 0;
  std::deque<std::weak_ptr<local_buffer_pool>> waiters_;
};

} // namespace flint::network
