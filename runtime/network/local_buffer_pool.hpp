#pragma once
/// A bounded pool for one result partition or input gate (Flink's LocalBufferPool).

#include "runtime/network/buffer.hpp"
#include "runtime/network/buffer_listener.hpp"
#include "runtime/network/buffer_recycler.hpp"

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace flint::network {

class network_buffer_pool;

/// Lends between `min` and `max` segments of the global pool to one partition or gate. Requests
/// never block: an empty pool says so, and the caller registers a callback (or a buffer_listener)
/// to learn when a buffer comes back. Buffers return here when released, from any thread.
///
/// Thread-safe. Callbacks and listeners run on the thread that released the buffer, with no pool
/// lock held; they must be cheap (e.g. send a message) and may call back into the pool.
class local_buffer_pool final : public buffer_recycler,
                                public std::enable_shared_from_this<local_buffer_pool> {
public:
  /// Made by network_buffer_pool::create_buffer_pool, which has reserved `min` segments.
  local_buffer_pool(std::shared_ptr<network_buffer_pool> global, std::size_t min, std::size_t max);
  ~local_buffer_pool() override;
  local_buffer_pool(const local_buffer_pool&) = delete;
  local_buffer_pool& operator=(const local_buffer_pool&) = delete;

  /// A buffer if one is free here or the global pool may lend one; never blocks.
  std::optional<buffer> request_buffer();
  /// True if request_buffer would succeed now.
  bool is_available() const;
  /// True while an owner waits to be told a buffer came back (a callback or a listener is
  /// registered): it writes again once woken.
  bool has_waiters() const;
  /// Runs `callback` once, when a buffer may have become available (buffers were recycled here
  /// or the global pool got one back). Returns false without registering when a buffer is
  /// available right now. The callback may race with other requesters: re-check, re-register.
  bool notify_when_available(std::function<void()> callback);
  /// Lets recycled buffers gather before the callbacks run: they wait for half of the buffers
  /// that can come back, i.e. all but the `held_by_owner` the waiting owner may keep itself (a
  /// result partition's partly filled buffers). A writer woken for every buffer made a thread
  /// switch per 32 KiB, the largest cost of the kernel's in WordCount; the bound keeps the wait
  /// finite, since every other buffer comes back once its consumer reads it.
  void wake_for_half(std::size_t held_by_owner);
  /// Registers `listener` to be offered recycled buffers directly, until it says it needs no
  /// more. Returns false without registering when a buffer is available right now or the pool is
  /// destroyed.
  bool add_buffer_listener(std::shared_ptr<buffer_listener> listener);

  /// Takes back the segment of a released buffer.
  void recycle(memory_segment segment) override;

  /// Returns idle segments to the global pool and drops the minimum reservation; buffers still
  /// out go to the global pool when released. Waiting callbacks run so their owners notice.
  void destroy();
  bool is_destroyed() const;

  std::size_t min_segments() const noexcept { return min_; }
  std::size_t max_segments() const noexcept { return max_; }
  std::size_t segment_size() const noexcept;
  /// Segments this pool holds, idle or lent out in buffers.
  std::size_t num_requested() const;
  /// Idle segments ready to be handed out.
  std::size_t num_available() const;
  /// Buffers handed out and not yet released.
  std::size_t num_in_use() const;

private:
  friend class network_buffer_pool;

  /// The global pool got a segment back; run the waiters.
  void on_global_segment_available();
  /// Offers a segment that belongs to this pool to a listener, else queues it and runs callbacks.
  void offer(memory_segment segment);
  std::vector<std::function<void()>> take_callbacks_locked();
  bool is_available_locked() const;
  /// True when enough buffers gathered for the waiting callbacks (wake_for_half).
  bool enough_to_wake_locked() const;

  const std::shared_ptr<network_buffer_pool> global_;
  const std::size_t min_;
  const std::size_t max_;
  mutable std::mutex mutex_;
  std::deque<memory_segment> available_;
  std::size_t requested_ = 0;
  bool destroyed_ = false;
  std::vector<std::function<void()>> callbacks_;
  /// wake_for_half's argument, or none: callbacks run on every recycled buffer.
  std::optional<std::size_t> held_by_owner_;
  std::deque<std::shared_ptr<buffer_listener>> listeners_;
};

} // namespace flint::network
