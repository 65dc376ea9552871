#include "runtime/network/input_gate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace flint::network {

input_gate::input_gate(std::size_t gate_index, std::shared_ptr<local_buffer_pool> floating_pool)
  : gate_index_(gate_index), floating_pool_(std::move(floating_pool)) {}

input_gate::~input_gate() {
  release();
}

void input_gate::add_channel(std::unique_ptr<input_channel> channel) {
  if (!channel || channel->channel_index() != channels_.size())
    throw std::logic_error("input_gate: channels are added in index order");
  auto index = channels_.size();
  channel->set_data_listener([this, index] { notify_channel_non_empty(index); });
  std::lock_guard<std::mutex> guard{mutex_};
  channels_.push_back(std::move(channel));
  queued_.push_back(false);
  ended_.push_back(false);
}

expected<unit> input_gate::setup() {
  for (auto& channel : channels_)
    if (auto ok = channel->setup(); !ok)
      return make_error(ok.error().code, "gate " + std::to_string(gate_index_) + " channel " +
                                           std::to_string(channel->channel_index()) + ": " + ok.error().message);
  return unit{};
}

expected<unit> input_gate::request_partitions() {
  for (auto& channel : channels_)
    if (auto ok = channel->request_subpartition(); !ok)
      return make_error(ok.error().code, "gate " + std::to_string(gate_index_) + " channel " +
                                           std::to_string(channel->channel_index()) + ": " + ok.error().message);
  return unit{};
}

void input_gate::notify_channel_non_empty(std::size_t index) {
  availability_listener notify;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_ || ended_[index] || queued_[index])
      return;
    queued_[index] = true;
    if (with_data_.empty())
      notify = listener_;
    with_data_.push_back(index);
  }
  if (notify)
    notify();
}

std::optional<buffer_or_event> input_gate::poll_next() {
  for (;;) {
    std::size_t index = 0;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (with_data_.empty() || released_)
        return std::nullopt;
      index = with_data_.front();
      with_data_.pop_front();
      queued_[index] = false;
    }
    auto next = channels_[index]->get_next_buffer();
    if (!next)
      continue; // a stale entry: the channel was drained on an earlier turn
    bool ended = next->buf.kind() == buffer_kind::end_of_partition;
    bool more = false;
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (ended) {
        ended_[index] = true;
        ++num_ended_;
      } else if (next->more_available && !queued_[index]) {
        // To the back of the queue: one buffer per channel per turn.
        queued_[index] = true;
        with_data_.push_back(index);
      }
      more = !with_data_.empty();
    }
    if (ended)
      channels_[index]->release();
    return buffer_or_event{std::move(next->buf), index, more};
  }
}

bool input_gate::is_finished() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !channels_.empty() && num_ended_ == channels_.size();
}

bool input_gate::has_data() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return !with_data_.empty();
}

void input_gate::set_availability_listener(availability_listener listener) {
  bool has_data = false;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    listener_ = listener;
    has_data = !with_data_.empty();
  }
  if (has_data && listener)
    listener();
}

void input_gate::release() {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (released_)
      return;
    released_ = true;
    with_data_.clear();
    listener_ = nullptr;
  }
  for (auto& channel : channels_)
    channel->release();
  if (floating_pool_)
    floating_pool_->destroy();
}

std::size_t input_gate::num_ended_channels() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return num_ended_;
}

} // namespace flint::network
