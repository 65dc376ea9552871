#pragma once
/// A record writer over one result partition that never blocks the task (Flink's RecordWriter,
/// mailbox style): when the partition's pool runs dry mid-record, the rest of that record and any
/// record emitted after it wait here, the task's yield flag goes up, and the task stops taking
/// input until a buffer comes back.

#include "runtime/network/availability_listener.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/streaming/operator_api.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace flint::streaming {

class partition_writer final : public record_writer {
public:
  /// Writes into `partition`; raises `*yield` when out of buffers.
  partition_writer(std::shared_ptr<network::result_partition> partition, bool* yield,
                   bool flush_always);

  using record_writer::emit;
  void emit(std::span<const char> record, std::size_t channel, bool timestamped) override;
  void broadcast_event(const network::buffer& event) override;
  std::size_t num_channels() const override { return partition_->num_subpartitions(); }
  /// Room in the channel's current buffer while nothing waits; none when every record is flushed
  /// at once (emit() flushes).
  /// A successful claim also opens the channel's cursor on the room behind the record.
  char* claim(std::size_t size, std::size_t channel) override {
    if (flush_always_ || !waiting_.empty())
      return nullptr;
    commit(channel);
    char* at = partition_->claim_record(size, channel);
    if (at) {
      dirty_ = true;
      open(channel);
    }
    return at;
  }
  char* claim_stamped(std::size_t size, std::size_t channel, std::int64_t timestamp) override {
    if (flush_always_ || !waiting_.empty())
      return nullptr;
    commit(channel);
    char* at = partition_->claim_stamped_record(size, channel, timestamp);
    if (at)
      dirty_ = true;
    return at;
  }
  /// None when every record is flushed at once.
  claim_cursor* claim_cursors() noexcept override {
    return flush_always_ ? nullptr : cursors_.data();
  }
  /// Hands what the cursors hold to the partition and closes them (before anything else is
  /// written, flushed or read from it).
  void commit_all() noexcept {
    if (!any_open_)
      return;
    for (std::size_t c = 0; c < cursors_.size(); ++c)
      commit(c);
    any_open_ = false;
  }

  /// Writes what waits; true when nothing waits any more.
  bool try_drain();
  /// Registers `listener` for the next buffer; false when one is available now (try again).
  bool notify_when_available(network::availability_listener listener);
  /// True while records wait for buffers.
  /// Puts `barrier` behind every record emitted so far, in every channel. While records wait
  /// for buffers it waits behind them, and goes out when they have (try_drain).
  expected<unit> broadcast_checkpoint_barrier(const network::checkpoint_barrier& barrier);
  bool is_blocked() const noexcept { return partition_->has_pending_record() || !waiting_.empty(); }
  /// True when records went into buffers since the last flush.
  bool is_dirty() const noexcept { return dirty_; }
  /// Queues the partly filled buffers (the buffer timeout fired).
  void flush();

  /// The partition, with every record of the cursors handed over.
  network::result_partition& partition() noexcept {
    commit_all();
    return *partition_;
  }
  const std::shared_ptr<network::result_partition>& partition_ptr() noexcept {
    commit_all();
    return partition_;
  }

private:
  void commit(std::size_t channel) noexcept {
    auto& cursor = cursors_[channel];
    if (!cursor.at)
      return;
    partition_->commit_claimed(channel, cursor.at, cursor.records);
    cursor = {};
  }
  void open(std::size_t channel) noexcept {
    auto room = partition_->claim_room(channel);
    if (room.empty())
      return;
    cursors_[channel] = {room.data(), room.data() + room.size(), 0};
    any_open_ = true;
  }

  /// A record, or (set) a barrier or another event for every channel.
  struct waiting_record {
    std::vector<char> bytes;
    std::size_t channel = 0;
    std::optional<network::checkpoint_barrier> barrier;
    bool timestamped = false;
    network::buffer event;
  };

  std::shared_ptr<network::result_partition> partition_;
  bool* yield_;
  bool flush_always_;
  bool dirty_ = false;
  bool any_open_ = false;
  std::vector<claim_cursor> cursors_;
  std::deque<waiting_record> waiting_;
};

} // namespace flint::streaming
