#include "runtime/network/input_channel.hpp"

namespace flint::network {

input_channel::input_channel(std::size_t channel_index, result_partition_id partition,
                             std::size_t subpartition)
  : channel_index_(channel_index),
    partition_(partition),
    subpartition_(subpartition) {}

input_channel::~input_channel() = default;

expected<unit> input_channel::setup() {
  return unit{};
}

void input_channel::notify_channel_non_empty() const {
  if (data_listener_)
    data_listener_();
}

} // namespace flint::network
