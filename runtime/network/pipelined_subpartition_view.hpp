#pragma once
/// A consumer's handle on one subpartition (Flink's PipelinedSubpartitionView).

#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer_and_backlog.hpp"
#include "runtime/network/pipelined_subpartition.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <cstddef>
#include <memory>
#include <optional>

namespace flint::network {

/// Reads one subpartition and keeps it (and its partition) alive while reading. Created by
/// result_partition::create_subpartition_view; the listener hears of data becoming available.
class pipelined_subpartition_view final : public result_subpartition_view {
public:
  /// Attaches to `subpartition` and registers `listener` there.
  pipelined_subpartition_view(std::shared_ptr<pipelined_subpartition> subpartition,
                              availability_listener listener);
  ~pipelined_subpartition_view() override;
  pipelined_subpartition_view(const pipelined_subpartition_view&) = delete;
  pipelined_subpartition_view& operator=(const pipelined_subpartition_view&) = delete;

  /// The next buffer or event with its backlog; nothing when the queue is empty or released.
  std::optional<buffer_and_backlog> get_next_buffer() override;
  /// True when the head can go with `credits` credits (events need none).
  bool is_available(std::size_t credits) const override;
  /// Data buffers queued.
  std::size_t backlog() const override;
  /// Stops listening; the subpartition stays for the partition's owner to release.
  void release_all_resources() override;
  bool is_released() const override { return released_; }
  std::size_t subpartition_index() const override { return subpartition_->index(); }

private:
  std::shared_ptr<pipelined_subpartition> subpartition_;
  bool released_ = false;
};

} // namespace flint::network
