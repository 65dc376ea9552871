#include "runtime/streaming/partition_writer.hpp"

#include <utility>

namespace flint::streaming {

partition_writer::partition_writer(std::shared_ptr<network::result_partition> partition,
                                   bool* yield, bool flush_always)
  : partition_(std::move(partition)),
    yield_(yield),
    flush_always_(flush_always),
    cursors_(partition_->num_subpartitions()) {}

void partition_writer::emit(std::span<const char> record, std::size_t channel,
                            bool timestamped) {
  commit_all();
  dirty_ = true;
  if (is_blocked()) {
    waiting_.push_back(
      {std::vector<char>(record.begin(), record.end()), channel, std::nullopt, timestamped, {}});
    return;
  }
  if (partition_->emit_record(record, channel, timestamped) == network::emit_result::blocked) {
    *yield_ = true;
    return;
  }
  if (flush_always_)
    partition_->flush(channel);
}

bool partition_writer::try_drain() {
  commit_all();
  if (partition_->has_pending_record() && partition_->resume() == network::emit_result::blocked)
    return false;
  while (!waiting_.empty()) {
    auto& next = waiting_.front();
    if (next.barrier) {
      auto barrier = *next.barrier;
      waiting_.pop_front();
      // Refused only by a partition that ended or takes no barriers: the checkpoint then never
      // completes and expires; the data is unaffected.
      (void)partition_->broadcast_checkpoint_barrier(barrier);
      continue;
    }
    if (next.event) {
      auto event = std::move(next.event);
      waiting_.pop_front();
      partition_->broadcast_event(event);
      continue;
    }
    auto result = partition_->emit_record(next.bytes, next.channel, next.timestamped);
    auto channel = next.channel;
    // The partition kept what it could not write.
    waiting_.pop_front();
    if (result == network::emit_result::blocked)
      return false;
    if (flush_always_)
      partition_->flush(channel);
  }
  return true;
}

expected<unit> partition_writer::broadcast_checkpoint_barrier(
  const network::checkpoint_barrier& barrier) {
  commit_all();
  if (!is_blocked())
    return partition_->broadcast_checkpoint_barrier(barrier);
  if (partition_->is_blocking())
    return make_error(errc::rejected,
                      "checkpoint barrier " + std::to_string(barrier.id)
                        + ": a blocking partition takes no checkpoints");
  waiting_.push_back({{}, 0, barrier, false, {}});
  return unit{};
}

void partition_writer::broadcast_event(const network::buffer& event) {
  commit_all();
  if (partition_->is_blocking())
    return;
  if (!is_blocked()) {
    partition_->broadcast_event(event);
    return;
  }
  waiting_record waiting;
  waiting.event = network::buffer::unpooled_copy(event.bytes(), event.kind());
  waiting_.push_back(std::move(waiting));
}

bool partition_writer::notify_when_available(network::availability_listener listener) {
  return partition_->notify_when_available(std::move(listener));
}

void partition_writer::flush() {
  commit_all();
  if (partition_->is_finished() || partition_->is_released())
    return;
  partition_->flush_all();
  dirty_ = false;
}

} // namespace flint::streaming
