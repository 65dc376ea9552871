#include "runtime/network/remote_input_channel.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace flint::network {

remote_input_channel::remote_input_channel(input_channel_id id, std::size_t channel_index,
                                           result_partition_id partition, std::size_t subpartition,
                                           std::shared_ptr<network_buffer_pool> global,
                                           std::shared_ptr<local_buffer_pool> floating_pool,
                                           std::size_t exclusive_buffers, std::size_t credit_batch)
  : input_channel(channel_index, partition, subpartition),
    id_(id),
    exclusive_buffers_(exclusive_buffers),
    manager_(std::make_shared<buffer_manager>(std::move(global), std::move(floating_pool),
                                              exclusive_buffers)) {
  // The partition request grants the exclusive buffers as initial credit.
  credit_outstanding_ = exclusive_buffers_;
  credit_batch_ = credit_batch == 0 ? 1 : credit_batch;
  manager_->set_credit_callback([this](std::size_t count) { on_new_credit(count); });
}

remote_input_channel::~remote_input_channel() {
  release();
}

expected<unit> remote_input_channel::setup() {
  return manager_->request_exclusive_buffers(exclusive_buffers_);
}

expected<unit> remote_input_channel::request_subpartition() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (released_)
    return make_error(errc::illegal_state,
                      "input channel " + std::to_string(channel_index()) + " is released");
  requested_ = true;
  return unit{};
}

partition_request remote_input_channel::partition_request() const {
  return network::partition_request{partition_id(), subpartition_index(), id_, exclusive_buffers_};
}

expected<unit> remote_input_channel::check_sequence(std::uint64_t sequence) const {
  std::lock_guard<std::mutex> guard{mutex_};
  if (sequence != expected_sequence_)
    return make_error(errc::illegal_state,
                      "buffer re-ordering on channel " + std::to_string(channel_index())
                        + ": expected sequence " + std::to_string(expected_sequence_) + ", got "
                        + std::to_string(sequence));
  return unit{};
}

expected<buffer> remote_input_channel::credited_buffer(std::uint64_t sequence) {
  auto target = manager_->request_buffer();
  if (!target)
    return make_error(errc::illegal_state,
                      "data buffer without credit on channel " + std::to_string(channel_index())
                        + " (sequence " + std::to_string(sequence) + ")");
  return std::move(*target);
}

expected<buffer> remote_input_channel::copy_into_credited(std::span<const char> bytes,
                                                          std::uint64_t sequence) {
  auto target = credited_buffer(sequence);
  if (!target)
    return target;
  if (bytes.size() > target->capacity())
    return make_error(errc::invalid_argument,
                      "received buffer of " + std::to_string(bytes.size())
                        + " bytes exceeds the segment size " + std::to_string(target->capacity()));
  // Flink copies the payload into the credited buffer too: the consumer's memory stays bounded
  // by its credits, whatever memory the transport received into.
  if (!bytes.empty())
    std::memcpy(target->data(), bytes.data(), bytes.size());
  target->set_size(bytes.size());
  return std::move(*target);
}

expected<unit> remote_input_channel::on_buffer(buffer_response response) {
  if (is_released())
    return unit{};
  if (auto ok = check_sequence(response.sequence); !ok)
    return ok;
  if (!response.buf.is_data())
    return enqueue(std::move(response.buf), response.backlog);
  auto received = copy_into_credited(response.buf.bytes(), response.sequence);
  if (!received)
    return received.error();
  response.buf.release();
  return enqueue(std::move(*received), response.backlog);
}

expected<unit> remote_input_channel::on_bytes(std::uint64_t sequence, std::size_t backlog,
                                              buffer_kind kind, std::span<const char> bytes) {
  if (is_released())
    return unit{};
  if (auto ok = check_sequence(sequence); !ok)
    return ok;
  if (kind != buffer_kind::data) // an event keeps its payload (a barrier's id and timestamp)
    return enqueue(buffer::unpooled_copy(bytes, kind), backlog);
  // One copy, from the transport's bytes straight into the credited buffer.
  auto received = copy_into_credited(bytes, sequence);
  if (!received)
    return received.error();
  return enqueue(std::move(*received), backlog);
}

expected<unit> remote_input_channel::on_received(std::uint64_t sequence, std::size_t backlog,
                                                 buffer_kind kind, std::vector<char>&& bytes) {
  if (is_released())
    return unit{};
  if (auto ok = check_sequence(sequence); !ok)
    return ok;
  if (kind != buffer_kind::data)
    return enqueue(buffer::unpooled_copy(bytes, kind), backlog);
  auto target = credited_buffer(sequence);
  if (!target)
    return target.error();
  if (bytes.size() != target->capacity())
    return on_bytes_into(std::move(*target), bytes, sequence, backlog);
  // The received memory takes the credited segment's place (the recycler stays: it returns to
  // this channel's pools); the segment it replaces is freed with `replaced`.
  auto size = bytes.size();
  auto replaced = target->exchange_segment(memory_segment::adopt(std::move(bytes)));
  target->set_size(size);
  return enqueue(std::move(*target), backlog);
}

expected<unit> remote_input_channel::on_bytes_into(buffer target, std::span<const char> bytes,
                                                   std::uint64_t sequence, std::size_t backlog) {
  if (bytes.size() > target.capacity())
    return make_error(errc::invalid_argument,
                      "received buffer of " + std::to_string(bytes.size())
                        + " bytes exceeds the segment size " + std::to_string(target.capacity())
                        + " (sequence " + std::to_string(sequence) + ")");
  if (!bytes.empty())
    std::memcpy(target.data(), bytes.data(), bytes.size());
  target.set_size(bytes.size());
  return enqueue(std::move(target), backlog);
}

expected<unit> remote_input_channel::enqueue(buffer received, std::size_t backlog) {
  bool is_data = received.is_data();
  bool was_empty = false;
  auto free_before = is_data ? manager_->num_available() + 1 : 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return unit{};
    if (is_data) {
      ++stats_.data_buffers;
      stats_.outstanding += credit_outstanding_;
      stats_.unannounced += unannounced_credit_;
      stats_.free += free_before;
      stats_.queued += received_.size();
      stats_.backlog += backlog;
    }
    was_empty = received_.empty();
    received_.push_back(std::move(received));
    last_backlog_ = backlog;
    ++expected_sequence_;
    if (is_data && credit_outstanding_ > 0)
      --credit_outstanding_;
  }
  if (was_empty)
    notify_channel_non_empty();
  if (is_data || backlog > 0) {
    // Flink's onSenderBacklog: keep backlog + initial credit buffers ready.
    // Also called with nothing added: the producer's credit went down by one, and credit held
    // back for a batch goes out once it is about to run dry.
    on_new_credit(manager_->request_floating_buffers(backlog + exclusive_buffers_));
  }
  return unit{};
}

void remote_input_channel::on_new_credit(std::size_t count) {
  availability_listener notify;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    unannounced_credit_ += count;
    if (should_announce())
      notify = credit_listener_;
  }
  if (notify)
    notify();
}

bool remote_input_channel::should_announce() const {
  // Batched: one add_credit per `credit_batch_` freed buffers while the consumer still has
  // received buffers to read (it is the slower side: fewer messages spare its time), but at once
  // when it has read everything it received (the producer is the slower side: credit held back
  // only shrinks what it may send while the consumer waits) or when the producer's credit runs
  // low (it holds less than a batch).
  return unannounced_credit_ > 0
    && (unannounced_credit_ >= credit_batch_ || credit_outstanding_ < credit_batch_
        || received_.empty());
}

void remote_input_channel::set_credit_batch(std::size_t batch) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    credit_batch_ = batch == 0 ? 1 : batch;
  }
  // A smaller batch may release credit held back.
  on_new_credit(0);
}

void remote_input_channel::set_credit_listener(availability_listener listener) {
  std::lock_guard<std::mutex> guard{mutex_};
  credit_listener_ = std::move(listener);
}

std::optional<add_credit> remote_input_channel::take_unannounced_credit() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (unannounced_credit_ == 0 || released_)
    return std::nullopt;
  auto credit = unannounced_credit_;
  unannounced_credit_ = 0;
  credit_outstanding_ += credit;
  ++stats_.announcements;
  stats_.announced += credit;
  return add_credit{id_, credit};
}

std::size_t remote_input_channel::unannounced_credit() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return unannounced_credit_;
}

std::optional<buffer_and_availability> remote_input_channel::get_next_buffer() {
  buffer_and_availability out;
  availability_listener notify;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (received_.empty() || released_)
      return std::nullopt;
    out.buf = std::move(received_.front());
    received_.pop_front();
    out.more_available = !received_.empty();
    out.backlog = last_backlog_;
    // The queue just ran empty: credit held back for a batch goes out now.
    if (!out.more_available && should_announce())
      notify = credit_listener_;
  }
  if (notify)
    notify();
  return out;
}

void remote_input_channel::release() {
  std::deque<buffer> dropped;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    released_ = true;
    dropped.swap(received_);
    credit_listener_ = nullptr;
  }
  // Order matters: the manager must be marked released first so that the exclusive buffers
  // dropped below go to the global pool instead of back into the channel.
  manager_->release_all();
  dropped.clear();
}

bool remote_input_channel::is_released() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return released_;
}

std::size_t remote_input_channel::num_queued() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return received_.size();
}

std::uint64_t remote_input_channel::expected_sequence() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return expected_sequence_;
}

remote_input_channel::arrival_stats remote_input_channel::stats() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return stats_;
}

} // namespace flint::network
