#pragma once
/// What one producer subtask writes for its consumers (Flink's BufferWritingResultPartition with
/// pipelined or bounded blocking subpartitions).

#include "runtime/common/expected.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/buffer_builder.hpp"
#include "runtime/network/checkpoint_barrier.hpp"
#include "runtime/network/local_buffer_pool.hpp"
#include "runtime/network/record_serializer.hpp"
#include "runtime/network/result_partition_id.hpp"
#include "runtime/network/result_subpartition.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace flint::network {

/// Whether a record went out completely.
enum class emit_result {
  /// The record is in buffers (queued or in the partly filled one).
  written,
  /// The pool ran dry mid-record. The rest is kept; wait for notify_when_available, then call
  /// resume() before emitting anything else. This is backpressure: the task stops pulling input.
  blocked,
};

/// Serializes records into per-subpartition buffers from a bounded local pool and hands full
/// buffers to the subpartition of their consumer. One writer thread (the producing task) calls
/// every method except create_subpartition_view, including flush (the buffer-timeout timer is a
/// mail of the same task); readers attach through views from any thread.
///
/// PIPELINED results queue buffers in pipelined subpartitions until their consumer takes them;
/// buffers go out when full, on flush (the caller runs `flush_all()` every
/// `execution.buffer-timeout`) and before the end-of-partition event. BLOCKING results copy each
/// full buffer into a bounded_blocking_subpartition and recycle it at once, so the writer never
/// waits for a consumer; flush does nothing for them (nobody reads before finish) and finish
/// gives the pool back.
class result_partition {
public:
  /// A pipelined partition with `num_subpartitions` consumers writing into `pool`, which it owns
  /// from now on (destroyed on release).
  result_partition(result_partition_id id, std::size_t num_subpartitions,
                   std::shared_ptr<local_buffer_pool> pool);
  /// A partition of `type` over `subpartitions` (subpartition i at index i), made by the caller
  /// as Flink's ResultPartitionFactory does: pipelined_subpartition for the pipelined types,
  /// bounded_blocking_subpartition for BLOCKING.
  result_partition(result_partition_id id,
                   std::vector<std::shared_ptr<result_subpartition>> subpartitions,
                   std::shared_ptr<local_buffer_pool> pool, graph::result_partition_type type);
  ~result_partition();
  result_partition(const result_partition&) = delete;
  result_partition& operator=(const result_partition&) = delete;

  /// Writes `record` for subpartition `target`, spanning buffers as needed.
  /// `timestamped`: the record's first 8 bytes are its event timestamp (record_serializer).
  emit_result emit_record(std::span<const char> record, std::size_t target,
                          bool timestamped = false);
  /// Frames a record of `size` bytes in `target`'s current buffer and returns where its bytes
  /// go, when the whole frame fits there with room to spare (so the buffer stays open and
  /// unqueued until the caller has written them); null otherwise, or while a record is blocked,
  /// or after finish/release: then call emit_record. Counts the record as emitted.
  char* claim_record(std::size_t size, std::size_t target) noexcept {
    auto* builder = claimable(target);
    if (!builder || builder->writable() <= record_serializer::framed_size(size)
        || size > record_serializer::max_length)
      return nullptr;
    char* at = builder->claim(record_serializer::framed_size(size));
    record_serializer::write_header(static_cast<std::uint32_t>(size), at);
    ++records_out_;
    return at + 4;
  }
  /// claim_record for a record stamped with event time `timestamp` (coded against the buffer's
  /// previous one, see record_serializer); returns where its `size` bytes go.
  char* claim_stamped_record(std::size_t size, std::size_t target,
                             std::int64_t timestamp) noexcept {
    auto* builder = claimable(target);
    if (!builder)
      return nullptr;
    auto code = record_serializer::stamp_code(timestamp, builder->timestamp_base());
    if (code < 0x80) {
      // The common case: one byte (timestamps close to the previous record's).
      if (builder->writable() <= size + 5 || size > record_serializer::max_length - 1)
        return nullptr;
      char* at = builder->claim(size + 5);
      record_serializer::write_header(
        static_cast<std::uint32_t>(size + 1) | record_serializer::timestamp_flag, at);
      at[4] = static_cast<char>(code);
      builder->set_timestamp_base(timestamp);
      ++records_out_;
      return at + 5;
    }
    auto n = record_serializer::stamp_size(code);
    if (builder->writable() <= size + 4 + n || size > record_serializer::max_length - n)
      return nullptr;
    char* at = builder->claim(size + 4 + n);
    record_serializer::write_header(
      static_cast<std::uint32_t>(size + n) | record_serializer::timestamp_flag, at);
    record_serializer::write_stamp(code, at + 4);
    builder->set_timestamp_base(timestamp);
    ++records_out_;
    return at + 4 + n;
  }
  /// Room in `target`'s current buffer that a writer may fill with framed records
  /// (record_serializer's 4-byte length, then the bytes; no timestamps) without a call per
  /// record, under claim_record's rules (no blocked record, not finished or released, a buffer
  /// open, a byte left free); empty when there is none. Until commit_claimed, nothing else may be
  /// written to `target`.
  std::span<char> claim_room(std::size_t target) noexcept {
    auto* builder = claimable(target);
    return builder ? builder->staged_room() : std::span<char>{};
  }
  /// Hands over what was written into claim_room(target): its bytes up to `end`, `records`
  /// records (counted as emitted).
  void commit_claimed(std::size_t target, const char* end, std::size_t records) noexcept {
    // Released meanwhile: the buffer is gone, and so are the records.
    if (released_.load(std::memory_order_relaxed) || !builders_[target])
      return;
    builders_[target]->commit_staged(end);
    records_out_ += records;
  }
  /// Continues the blocked record.
  emit_result resume();
  /// True while a record waits for a buffer.
  bool has_pending_record() const noexcept { return pending_target_.has_value(); }

  /// True when a buffer can be had now (Flink's isAvailable of the record writer).
  bool is_available() const;
  /// Runs `listener` once when a buffer may be available again; false (not registered) when one
  /// is available now.
  bool notify_when_available(availability_listener listener);

  /// Queues the partly filled buffer of `target`, if it holds anything (pipelined only).
  void flush(std::size_t target);
  /// Flushes every subpartition.
  void flush_all();
  /// Flushes and queues end-of-partition in every subpartition; no records may follow. A
  /// blocking partition destroys its pool here: its subpartitions hold copies.
  void finish();

  /// Flushes every subpartition and puts `barrier` behind the records written so far (Flink's
  /// broadcastEvent of a CheckpointBarrier). Checkpoints are for streaming: a blocking partition
  /// refuses (errc::rejected), as does a finished or failed one.
  expected<unit> broadcast_checkpoint_barrier(const checkpoint_barrier& barrier);
  /// Flushes every subpartition and puts the event (a watermark or a watermark status,
  /// stream_events.hpp) behind the records written so far. A blocking partition drops it: its
  /// consumer reads after the producer finished, when every watermark is the maximum.
  void broadcast_event(const buffer& event);
  /// Drops queued buffers, refuses further use and destroys the pool (buffers still held by
  /// consumers return to the global pool when released).
  void release();

  /// Why a subpartition refused a buffer (a blocking one could not write its spill file), if one
  /// did: the data is incomplete and the producing task must fail.
  std::optional<error> failure() const {
    if (!refused_)
      return std::nullopt;
    return first_failure();
  }

  /// A reader for subpartition `index`; `listener` hears when data becomes available.
  expected<std::unique_ptr<result_subpartition_view>> create_subpartition_view(
    std::size_t index, availability_listener listener);

  const result_partition_id& id() const noexcept { return id_; }
  graph::result_partition_type type() const noexcept { return type_; }
  /// True for BLOCKING results: kept after consumption, read any number of times.
  bool is_blocking() const noexcept { return type_ == graph::result_partition_type::blocking; }
  std::size_t num_subpartitions() const noexcept { return subpartitions_.size(); }
  result_subpartition& subpartition(std::size_t index) { return *subpartitions_.at(index); }
  const std::shared_ptr<local_buffer_pool>& pool() const noexcept { return pool_; }
  bool is_finished() const noexcept { return finished_; }
  bool is_released() const noexcept { return released_; }
  /// Records emitted (counting a blocked one once).
  std::size_t num_records_out() const noexcept { return records_out_; }
  /// Data buffers handed to the subpartitions, and their bytes (Flink's numBuffersOut and
  /// numBytesOut).
  std::size_t num_buffers_out() const noexcept { return buffers_out_; }
  std::size_t num_bytes_out() const noexcept { return bytes_out_; }

private:
  /// The builder of `target` a record may be claimed in, if any.
  buffer_builder* claimable(std::size_t target) noexcept {
    if (pending_target_ || target >= builders_.size() || finished_.load(std::memory_order_relaxed)
        || released_.load(std::memory_order_relaxed) || !builders_[target])
      return nullptr;
    return &*builders_[target];
  }
  emit_result write_pending();
  void check_writable(const char* what) const;
  /// Hands the builder's buffer of `target` to its subpartition, if it holds anything.
  void flush_builder(std::size_t target);
  void add(std::size_t target, buffer next) {
    ++buffers_out_;
    bytes_out_ += next.size();
    if (!subpartitions_[target]->add(std::move(next)))
      refused_ = true;
  }
  std::optional<error> first_failure() const;

  const result_partition_id id_;
  const graph::result_partition_type type_;
  std::shared_ptr<local_buffer_pool> pool_;
  std::vector<std::shared_ptr<result_subpartition>> subpartitions_;
  std::vector<std::optional<buffer_builder>> builders_;
  record_serializer serializer_;
  std::optional<std::size_t> pending_target_;
  std::size_t records_out_ = 0;
  std::size_t buffers_out_ = 0;
  std::size_t bytes_out_ = 0;
  bool refused_ = false;
  // Read by consumers creating views on other threads.
  std::atomic<bool> finished_ = false;
  std::atomic<bool> released_ = false;
};

} // namespace flint::network
