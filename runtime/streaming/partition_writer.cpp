#include "runtime/streaming/partition_writer.hpp"

#include <utility>

namespace flint::streaming {

partition_writer::partition_writer(std::shared_ptr<network::result_partition> partition,
                                   bool* yield, bool flush_always)
  : partition_(std::move(partition)),
    yield_(yield),
    flush_always_(flush_always) {}

void partition_writer::emit(std::span<const char> record, std::size_t channel) {
  dirty_ = true;
  if (is_blocked()) {
    waiting_.push_back({std::vector<char>(record.begin(), record.end()), channel});
    return;
  }
  if (partition_->emit_record(record, channel) == network::emit_result::blocked) {
    *yield_ = true;
    return;
  }
  if (flush_always_)
    partition_->flush(channel);
}

bool partition_writer::try_drain() {
  if (partition_->has_pending_record() && partition_->resume() == network::emit_result::blocked)
    return false;
  while (!waiting_.empty()) {
    auto& next = waiting_.front();
    auto result = partition_->emit_record(next.bytes, next.channel);
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

bool partition_writer::notify_when_available(network::availability_listener listener) {
  return partition_->notify_when_available(std::move(listener));
}

void partition_writer::flush() {
  if (partition_->is_finished() || partition_->is_released())
    return;
  partition_->flush_all();
  dirty_ = false;
}

} // namespace flint::streaming
