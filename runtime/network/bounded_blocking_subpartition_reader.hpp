#pragma once
/// One reader of a blocking subpartition (Flink's BoundedBlockingSubpartitionReader).

#include "runtime/network/availability_listener.hpp"
#include "runtime/network/bounded_blocking_subpartition.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace flint::network {

/// Reads a finished bounded_blocking_subpartition from its first buffer to end-of-partition.
/// Each buffer it hands out is a copy in one of `num_read_buffers` segments of its own (heap memory
/// outside the network pools, made on first use and freed with the reader), so reading a large
/// spilled subpartition holds no more than that; a released buffer comes back to the reader,
/// which then tells its listener there is more. Made before finish, it waits for finish (its
/// listener fires then).
///
/// One reader thread calls it; buffers may be released on any thread.
class bounded_blocking_subpartition_reader final : public result_subpartition_view {
public:
  /// Flink's FileBufferReader reads with two buffers: one with the consumer, one being filled.
  static constexpr std::size_t default_read_buffers = 2;

  bounded_blocking_subpartition_reader(std::shared_ptr<bounded_blocking_subpartition> parent,
                                       availability_listener listener,
                                       std::size_t num_read_buffers = default_read_buffers);
  ~bounded_blocking_subpartition_reader() override;
  bounded_blocking_subpartition_reader(const bounded_blocking_subpartition_reader&) = delete;
  bounded_blocking_subpartition_reader& operator=(const bounded_blocking_subpartition_reader&) =
    delete;

  /// The next copy (or end-of-partition after the last); nothing while every read buffer is out
  /// (the listener fires when one comes back), before finish, after release or a failed read.
  std::optional<buffer_and_backlog> get_next_buffer() override;
  bool is_available(std::size_t credits) const override;
  /// Data buffers not read yet.
  std::size_t backlog() const override;
  void release_all_resources() override;
  bool is_released() const override { return released_; }
  std::size_t subpartition_index() const override { return parent_->index(); }

  /// Why reading stopped early (the subpartition was released, the file could not be read).
  const std::optional<error>& failure() const noexcept { return failure_; }

private:
  /// The reader's segments, shared with the buffers it handed out.
  class read_buffers;

  /// True once the parent is finished and the sizes are known.
  bool ready() const;

  std::shared_ptr<bounded_blocking_subpartition> parent_;
  std::shared_ptr<read_buffers> buffers_;
  std::uint64_t id_ = 0;
  mutable bool ready_ = false;
  mutable std::size_t total_ = 0;
  std::size_t next_ = 0;
  std::uint64_t file_offset_ = 0;
  bool end_sent_ = false;
  bool released_ = false;
  std::optional<error> failure_;
};

} // namespace flint::network
