#include "runtime/network/network_environment.hpp"

#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/network_messages.hpp"
#include "runtime/network/remote_input_channel.hpp"

#include <string>
#include <utility>

namespace flint::network {

network_environment::network_environment(network_config config)
  : config_(config), global_(network_buffer_pool::make(config.num_segments(), config.segment_size)) {}

network_environment::~network_environment() {
  shutdown();
}

expected<std::shared_ptr<result_partition>> network_environment::create_result_partition(
  const result_partition_id& id, std::size_t num_subpartitions) {
  if (num_subpartitions == 0)
    return make_error(errc::invalid_argument, "result partition " + to_string(id) + " needs at least one subpartition");
  auto pool =
    global_->create_buffer_pool(config_.partition_pool_min(num_subpartitions), config_.partition_pool_max(num_subpartitions));
  if (!pool)
    return make_error(pool.error().code, "result partition " + to_string(id) + ": " + pool.error().message);
  auto partition = std::make_shared<result_partition>(id, num_subpartitions, std::move(*pool));
  if (auto ok = partitions_.register_partition(partition); !ok) {
    partition->release();
    return ok.error();
  }
  return partition;
}

expected<std::unique_ptr<input_gate>> network_environment::create_input_gate(
  std::size_t gate_index, const std::vector<channel_descriptor>& channels) {
  if (channels.empty())
    return make_error(errc::invalid_argument, "input gate " + std::to_string(gate_index) + " has no channels");
  std::shared_ptr<local_buffer_pool> floating;
  bool any_remote = false;
  for (auto& descriptor : channels)
    any_remote = any_remote || !descriptor.local;
  if (any_remote && config_.floating_buffers_per_gate > 0) {
    auto pool = global_->create_buffer_pool(0, config_.floating_buffers_per_gate);
    if (!pool)
      return make_error(pool.error().code, "input gate " + std::to_string(gate_index) + ": " + pool.error().message);
    floating = std::move(*pool);
  }
  auto gate = std::make_unique<input_gate>(gate_index, floating);
  for (std::size_t i = 0; i < channels.size(); ++i) {
    auto& descriptor = channels[i];
    if (descriptor.local) {
      gate->add_channel(
        std::make_unique<local_input_channel>(i, descriptor.partition, descriptor.subpartition, partitions_));
    } else {
      input_channel_id id{static_cast<std::uint32_t>(gate_index), static_cast<std::uint32_t>(i)};
      gate->add_channel(std::make_unique<remote_input_channel>(id, i, descriptor.partition, descriptor.subpartition,
                                                               global_, floating, config_.buffers_per_channel));
    }
  }
  if (auto ok = gate->setup(); !ok)
    return ok.error(); // the gate's destructor gives back what setup took
  return gate;
}

void network_environment::shutdown() {
  partitions_.release_all();
}

} // namespace flint::network
