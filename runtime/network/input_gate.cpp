#include "runtime/network/input_gate.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace flint::network {

struct input_gate::queue_state {
  std::mutex mutex;
  std::deque<std::size_t> with_data;
  std::vector<bool> queued;
  std::vector<bool> ended;
  /// Held by a checkpoint alignment: not read until resumed.
  std::vector<bool> blocked;
  /// Blocked with data waiting: queued again when resumed.
  std::vector<bool> parked;
  std::size_t num_ended = 0;
  bool released = false;
  availability_listener listener;

  void notify_channel_non_empty(std::size_t index) {
    availability_listener notify;
    {
      std::lock_guard<std::mutex> guard{mutex};
      if (released || ended[index] || queued[index])
        return;
      if (blocked[index]) {
        parked[index] = true;
        return;
      }
      queued[index] = true;
      if (with_data.empty())
        notify = listener;
      with_data.push_back(index);
    }
    if (notify)
      notify();
  }
};

input_gate::input_gate(std::size_t gate_index, std::shared_ptr<local_buffer_pool> floating_pool)
  : gate_index_(gate_index),
    floating_pool_(std::move(floating_pool)),
    state_(std::make_shared<queue_state>()) {}

input_gate::~input_gate() {
  release();
}

void input_gate::add_channel(std::unique_ptr<input_channel> channel) {
  if (!channel || channel->channel_index() != channels_.size())
    throw std::logic_error("input_gate: channels are added in index order");
  auto index = channels_.size();
  channel->set_data_listener([state = state_, index] { state->notify_channel_non_empty(index); });
  std::lock_guard<std::mutex> guard{state_->mutex};
  channels_.push_back(std::move(channel));
  state_->queued.push_back(false);
  state_->ended.push_back(false);
  state_->blocked.push_back(false);
  state_->parked.push_back(false);
}

expected<unit> input_gate::setup() {
  for (auto& channel : channels_)
    if (auto ok = channel->setup(); !ok)
      return make_error(ok.error().code,
                        "gate " + std::to_string(gate_index_) + " channel "
                          + std::to_string(channel->channel_index()) + ": " + ok.error().message);
  return unit{};
}

expected<unit> input_gate::request_partitions() {
  for (auto& channel : channels_)
    if (auto ok = channel->request_subpartition(); !ok)
      return make_error(ok.error().code,
                        "gate " + std::to_string(gate_index_) + " channel "
                          + std::to_string(channel->channel_index()) + ": " + ok.error().message);
  return unit{};
}

std::optional<buffer_or_event> input_gate::poll_next() {
  for (;;) {
    std::size_t index = 0;
    {
      std::lock_guard<std::mutex> guard{state_->mutex};
      if (state_->with_data.empty() || state_->released)
        return std::nullopt;
      index = state_->with_data.front();
      state_->with_data.pop_front();
      state_->queued[index] = false;
      if (state_->blocked[index]) {
        state_->parked[index] = true; // queued before it was blocked: read it when resumed
        continue;
      }
    }
    auto next = channels_[index]->get_next_buffer();
    if (!next)
      continue; // a stale entry: the channel was drained on an earlier turn
    bool ended = next->buf.kind() == buffer_kind::end_of_partition;
    bool more = false;
    {
      std::lock_guard<std::mutex> guard{state_->mutex};
      if (ended) {
        state_->ended[index] = true;
        ++state_->num_ended;
      } else if (next->more_available && !state_->queued[index]) {
        // To the back of the queue: one buffer per channel per turn.
        state_->queued[index] = true;
        state_->with_data.push_back(index);
      }
      more = !state_->with_data.empty();
    }
    if (ended)
      channels_[index]->release();
    return buffer_or_event{std::move(next->buf), index, more};
  }
}

bool input_gate::is_finished() const {
  std::lock_guard<std::mutex> guard{state_->mutex};
  return !channels_.empty() && state_->num_ended == channels_.size();
}

bool input_gate::has_data() const {
  std::lock_guard<std::mutex> guard{state_->mutex};
  return !state_->with_data.empty();
}

void input_gate::set_availability_listener(availability_listener listener) {
  bool has_data = false;
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    state_->listener = listener;
    has_data = !state_->with_data.empty();
  }
  if (has_data && listener)
    listener();
}

void input_gate::release() {
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    if (state_->released)
      return;
    state_->released = true;
    state_->with_data.clear();
    state_->listener = nullptr;
  }
  for (auto& channel : channels_)
    channel->release();
  if (floating_pool_)
    floating_pool_->destroy();
}

void input_gate::block_channel(std::size_t index) {
  std::lock_guard<std::mutex> guard{state_->mutex};
  state_->blocked.at(index) = true;
}

void input_gate::resume_channel(std::size_t index) {
  availability_listener notify;
  {
    std::lock_guard<std::mutex> guard{state_->mutex};
    state_->blocked.at(index) = false;
    if (!state_->parked[index] || state_->released)
      return;
    state_->parked[index] = false;
    if (state_->queued[index] || state_->ended[index])
      return;
    state_->queued[index] = true;
    if (state_->with_data.empty())
      notify = state_->listener;
    state_->with_data.push_back(index);
  }
  if (notify)
    notify();
}

bool input_gate::is_blocked(std::size_t index) const {
  std::lock_guard<std::mutex> guard{state_->mutex};
  return state_->blocked.at(index);
}

std::size_t input_gate::num_ended_channels() const {
  std::lock_guard<std::mutex> guard{state_->mutex};
  return state_->num_ended;
}

} // namespace flint::network
