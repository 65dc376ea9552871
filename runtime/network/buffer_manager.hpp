#pragma once
/// The buffers a remote input channel receives into: its exclusive ones and floating ones
/// borrowed from the gate (Flink's BufferManager).

#include "runtime/common/expected.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/buffer_listener.hpp"
#include "runtime/network/buffer_recycler.hpp"
#include "runtime/network/local_buffer_pool.hpp"
#include "runtime/network/network_buffer_pool.hpp"

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace flint::network {

/// Every buffer held here available is one credit of its channel. Exclusive buffers come from the
/// global pool and return here when released; floating ones are requested from the gate's pool to
/// cover the producer's backlog and go back to it when no longer needed.
///
/// Thread-safe: buffers are released, and the gate's pool offers floating buffers, on whatever
/// thread does so. The credit callback runs without locks held.
class buffer_manager final : public buffer_recycler,
                             public buffer_listener,
                             public std::enable_shared_from_this<buffer_manager> {
public:
  /// Receives new credit (count of buffers that became available).
  using credit_callback = std::function<void(std::size_t)>;

  /// A manager aiming at `num_required` available buffers until told otherwise.
  buffer_manager(std::shared_ptr<network_buffer_pool> global,
                 std::shared_ptr<local_buffer_pool> floating_pool, std::size_t num_required);

  /// Takes `count` exclusive segments from the global pool.
  expected<unit> request_exclusive_buffers(std::size_t count);
  /// A buffer to receive into: floating first (they are borrowed), then exclusive.
  std::optional<buffer> request_buffer();
  /// Aims at `num_required` available buffers (backlog + initial credit) and borrows floating
  /// buffers up to that; when the gate's pool is dry it registers for the next recycled one.
  /// Returns how many buffers were added now.
  std::size_t request_floating_buffers(std::size_t num_required);

  /// An exclusive buffer came back; a surplus floating buffer is returned to the gate instead of
  /// keeping both (then no new credit).
  void recycle(memory_segment segment) override;
  /// The gate's pool offers a recycled floating buffer.
  buffer_listener_result notify_buffer_available(buffer& offered) override;

  /// Gives every buffer back (exclusive to the global pool, floating to the gate's); exclusive
  /// buffers still out go to the global pool when released.
  void release_all();
  /// Sets who hears of new credit.
  void set_credit_callback(credit_callback callback);

  std::size_t num_available() const;
  std::size_t num_exclusive_available() const;
  std::size_t num_floating_available() const;
  std::size_t num_required() const;
  bool is_waiting_for_floating_buffers() const;

private:
  void notify_credit(std::size_t count);

  const std::shared_ptr<network_buffer_pool> global_;
  const std::shared_ptr<local_buffer_pool> floating_pool_;
  mutable std::mutex mutex_;
  std::deque<buffer> exclusive_;
  std::deque<buffer> floating_;
  std::size_t num_required_ = 0;
  bool waiting_for_floating_ = false;
  bool released_ = false;
  credit_callback on_credit_;
};

} // namespace flint::network
