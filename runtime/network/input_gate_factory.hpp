#pragma once
/// Makes the input gates of a TaskExecutor's tasks (Flink's SingleInputGateFactory): the one
/// place that decides a channel's kind and sizes the gate's pools.

#include "runtime/common/expected.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/result_partition_id.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace flint::network {

/// Where one channel of a gate reads from (Flink's InputChannelDeploymentDescriptor).
struct channel_descriptor {
  result_partition_id partition;
  std::size_t subpartition = 0;
  /// True when the producer runs in this process: the channel reads its subpartition directly.
  /// Otherwise a remote channel waits for a transport.
  bool local = true;
};

class input_gate_factory {
public:
  input_gate_factory(const network_config& config, std::shared_ptr<network_buffer_pool> global);

  /// A set-up gate with one channel per descriptor, channel i reading `channels[i]`: local ones
  /// from `partitions` (which must outlive the gate), remote ones with their exclusive buffers
  /// taken now and a floating pool of floating-buffers-per-gate shared by them. Nothing is
  /// requested yet. On error whatever setup took is given back.
  expected<std::unique_ptr<input_gate>> create(std::size_t gate_index,
                                               const std::vector<channel_descriptor>& channels,
                                               result_partition_manager& partitions) const;

private:
  const network_config config_;
  std::shared_ptr<network_buffer_pool> global_;
};

} // namespace flint::network
