#include "runtime/network/input_gate_factory.hpp"

#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/network_messages.hpp"
#include "runtime/network/remote_input_channel.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace flint::network {

input_gate_factory::input_gate_factory(const network_config& config,
                                       std::shared_ptr<network_buffer_pool> global)
  : config_(config),
    global_(std::move(global)) {}

expected<std::unique_ptr<input_gate>> input_gate_factory::create(
  std::size_t gate_index, const std::vector<channel_descriptor>& channels,
  result_partition_manager& partitions) const {
  if (channels.empty())
    return make_error(errc::invalid_argument,
                      "input gate " + std::to_string(gate_index) + " has no channels");
  bool any_remote =
    std::any_of(channels.begin(), channels.end(), [](const auto& d) { return !d.local; });
  std::shared_ptr<local_buffer_pool> floating;
  if (any_remote && config_.floating_buffers_per_gate > 0) {
    auto pool = global_->create_buffer_pool(0, config_.floating_buffers_per_gate);
    if (!pool)
      return make_error(pool.error().code,
                        "Insufficient network buffers for input gate " + std::to_string(gate_index)
                          + ": " + pool.error().message);
    floating = std::move(*pool);
  }
  auto gate = std::make_unique<input_gate>(gate_index, floating);
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto& d = channels[i];
    if (d.local) {
      gate->add_channel(
        std::make_unique<local_input_channel>(i, d.partition, d.subpartition, partitions));
    } else {
      input_channel_id id{static_cast<std::uint32_t>(gate_index), static_cast<std::uint32_t>(i)};
      gate->add_channel(std::make_unique<remote_input_channel>(
        id, i, d.partition, d.subpartition, global_, floating, config_.buffers_per_channel));
    }
  }
  if (auto ok = gate->setup(); !ok)
    return ok.error(); // the gate's destructor gives back what setup took
  return gate;
}

} // namespace flint::network
