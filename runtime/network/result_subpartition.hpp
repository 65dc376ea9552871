#pragma once
/// What one consumer of a result partition reads from (Flink's ResultSubpartition).

#include "runtime/common/expected.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <cstddef>
#include <memory>
#include <optional>

namespace flint::network {

/// The finished buffers written for one consuming subtask. The producer adds on its thread
/// (result_partition calls add once per finished buffer, never per record); readers attach with
/// create_read_view from any thread. Implementations: pipelined_subpartition (a queue the reader
/// drains while the producer writes) and bounded_blocking_subpartition (kept until released,
/// readable after finish). Always owned by a shared_ptr: views keep their subpartition alive.
class result_subpartition : public std::enable_shared_from_this<result_subpartition> {
public:
  explicit result_subpartition(std::size_t index) : index_(index) {}
  virtual ~result_subpartition() = default;
  result_subpartition(const result_subpartition&) = delete;
  result_subpartition& operator=(const result_subpartition&) = delete;

  /// Takes a finished buffer or event. Returns false (and releases `next`) once finished,
  /// released or failed.
  virtual bool add(buffer next) = 0;
  /// Appends end-of-partition; nothing may be added afterwards.
  virtual void finish() = 0;
  /// Drops what the subpartition holds and refuses further adds.
  virtual void release() = 0;
  /// A reader whose `listener` hears when something can be read.
  virtual expected<std::unique_ptr<result_subpartition_view>> create_read_view(
    availability_listener listener) = 0;

  /// Data buffers a reader attaching now would still get.
  virtual std::size_t backlog() const = 0;
  /// Buffers and events waiting in a queue (0 for kinds that keep no queue).
  virtual std::size_t queued() const = 0;
  virtual bool is_finished() const = 0;
  virtual bool is_released() const = 0;
  /// Data buffers ever added (for metrics and tests).
  virtual std::size_t total_data_buffers() const = 0;
  /// Why the subpartition refused a buffer other than being finished or released (a file it
  /// could not write), if it did.
  virtual std::optional<error> failure() const { return std::nullopt; }

  std::size_t index() const noexcept { return index_; }

private:
  const std::size_t index_;
};

} // namespace flint::network
