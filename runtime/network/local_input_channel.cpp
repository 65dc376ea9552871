#include "runtime/network/local_input_channel.hpp"

#include "runtime/network/result_partition_manager.hpp"

#include <string>
#include <utility>

namespace flint::network {

local_input_channel::local_input_channel(std::size_t channel_index, result_partition_id partition,
                                         std::size_t subpartition,
                                         result_partition_manager& partitions)
  : input_channel(channel_index, partition, subpartition),
    partitions_(partitions) {}

local_input_channel::~local_input_channel() {
  release();
}

expected<unit> local_input_channel::request_subpartition() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (released_)
    return make_error(errc::illegal_state,
                      "input channel " + std::to_string(channel_index()) + " is released");
  if (view_)
    return unit{};
  // The producer thread calls the gate's listener itself rather than through this channel, so
  // a notification in progress never runs into a channel being destroyed.
  auto view =
    partitions_.create_subpartition_view(partition_id(), subpartition_index(), data_listener());
  if (!view)
    return view.error();
  view_ = std::move(*view);
  return unit{};
}

std::optional<buffer_and_availability> local_input_channel::get_next_buffer() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!view_)
    return std::nullopt;
  auto next = view_->get_next_buffer();
  if (!next)
    return std::nullopt;
  return buffer_and_availability{std::move(next->buf), next->is_data_available, next->backlog};
}

void local_input_channel::release() {
  std::unique_ptr<result_subpartition_view> view;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    released_ = true;
    view.swap(view_);
  }
}

bool local_input_channel::is_released() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return released_;
}

} // namespace flint::network
