#include "runtime/network/remote_input_channel.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace flint::network {

remote_input_channel::remote_input_channel(input_channel_id id, std::size_t channel_index,
                                           result_partition_id partition, std::size_t subpartition,
                                           std::shared_ptr<network_buffer_pool> global,
                                           std::shared_ptr<local_buffer_pool> floating_pool,
                                           std::size_t exclusive_buffers)
  : input_channel(channel_index, partition, subpartition),
    id_(id),
    exclusive_buffers_(exclusive_buffers),
    manager_(std::make_shared<buffer_manager>(std::move(global), std::move(floating_pool), exclusive_buffers)) {
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
    return make_error(errc::illegal_state, "input channel " + std::to_string(channel_index()) + " is released");
  requested_ = true;
  return unit{};
}

partition_request remote_input_channel::partition_request() const {
  return network::partition_request{partition_id(), subpartition_index(), id_, exclusive_buffers_};
}

expected<unit> remote_input_channel::on_buffer(buffer_response response) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return unit{};
    if (response.sequence != expected_sequence_)
      return make_error(errc::illegal_state, "buffer re-ordering on channel " + std::to_string(channel_index()) +
                                               ": expected sequence " + std::to_string(expected_sequence_) +
                                               ", got " + std::to_string(response.sequence));
  }
  buffer received;
  if (response.buf.is_data()) {
    auto target = manager_->request_buffer();
    if (!target)
      return make_error(errc::illegal_state, "data buffer without credit on channel " +
                                               std::to_string(channel_index()) + " (sequence " +
                                               std::to_string(response.sequence) + ")");
    if (response.buf.size() > target->capacity())
      return make_error(errc::invalid_argument, "received buffer of " + std::to_string(response.buf.size()) +
                                                  " bytes exceeds the segment size " +
                                                  std::to_string(target->capacity()));
    // Flink copies the payload into the credited buffer too: the consumer's memory stays bounded
    // by its credits, whatever memory the transport received into.
    // TODO(perf): in one process the incoming buffer could be kept and the credited one parked.
    if (response.buf.size() > 0)
      std::memcpy(target->data(), response.buf.data(), response.buf.size());
    target->set_size(response.buf.size());
    response.buf.release();
    received = std::move(*target);
  } else {
    received = std::move(response.buf);
  }
  bool is_data = received.is_data();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return unit{};
    was_empty = received_.empty();
    received_.push_back(std::move(received));
    last_backlog_ = response.backlog;
    ++expected_sequence_;
  }
  if (was_empty)
    notify_channel_non_empty();
  if (is_data || response.backlog > 0) {
    // Flink's onSenderBacklog: keep backlog + initial credit buffers ready.
    auto added = manager_->request_floating_buffers(response.backlog + exclusive_buffers_);
    on_new_credit(added);
  }
  return unit{};
}

void remote_input_channel::on_new_credit(std::size_t count) {
  if (count == 0)
    return;
  availability_listener notify;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    if (unannounced_credit_ == 0)
      notify = credit_listener_;
    unannounced_credit_ += count;
  }
  if (notify)
    notify();
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
  return add_credit{id_, credit};
}

std::size_t remote_input_channel::unannounced_credit() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return unannounced_credit_;
}

std::optional<buffer_and_availability> remote_input_channel::get_next_buffer() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (received_.empty() || released_)
    return std::nullopt;
  buffer_and_availability out;
  out.buf = std::move(received_.front());
  received_.pop_front();
  out.more_available = !received_.empty();
  out.backlog = last_backlog_;
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

} // namespace flint::network
