#pragma once
/// The queue of finished buffers for one consumer (Flink's PipelinedSubpartition).

#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/buffer_and_backlog.hpp"
#include "runtime/network/result_subpartition.hpp"

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace flint::network {

/// Buffers written for one consuming subtask, in order, until a consumer polls them. The
/// producer adds on its thread; the reader (a local channel or a transport) polls on its own, so
/// the queue is locked. The reader's listener is told when the queue turns non-empty.
///
/// Only finished buffers are queued: the partly filled one stays with the result_partition until
/// it is full or flushed, so the backlog counts exactly the data buffers a consumer will receive.
class pipelined_subpartition final : public result_subpartition {
public:
  explicit pipelined_subpartition(std::size_t index);

  /// Queues a finished buffer or event. Returns false (and releases `next`) once finished or
  /// released.
  bool add(buffer next) override;
  /// Queues the end-of-partition event; nothing may be added afterwards.
  void finish() override;
  /// Drops every queued buffer (returning it to its pool) and refuses further adds.
  void release() override;
  /// A pipelined_subpartition_view; the reader drains the queue as the producer fills it.
  expected<std::unique_ptr<result_subpartition_view>> create_read_view(
    availability_listener listener) override;

  /// The next queued buffer, if any, with the backlog behind it.
  std::optional<buffer_and_backlog> poll_buffer();
  /// True when the head can be sent with `credits` credits: data needs one, events none.
  bool is_available(std::size_t credits) const;
  /// True when something is queued.
  bool is_data_available() const;

  /// Sets the reader's listener (one reader per subpartition, Flink's rule). Runs it once at
  /// once when data is already queued, so no wake-up is lost.
  void set_listener(availability_listener listener);
  /// Drops the reader's listener.
  void clear_listener();

  /// Data buffers queued.
  std::size_t backlog() const override;
  /// Buffers and events queued.
  std::size_t queued() const override;
  bool is_finished() const override;
  bool is_released() const override;
  /// Data buffers ever added (for metrics and tests).
  std::size_t total_data_buffers() const override;

private:
  mutable std::mutex mutex_;
  std::deque<buffer> buffers_;
  std::size_t backlog_ = 0;
  std::size_t total_data_buffers_ = 0;
  bool finished_ = false;
  bool released_ = false;
  availability_listener listener_;
};

} // namespace flint::network
