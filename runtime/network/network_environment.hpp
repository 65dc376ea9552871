#pragma once
/// A TaskExecutor's network stack in one place (Flink's NettyShuffleEnvironment, without Netty).

#include "runtime/common/expected.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/result_partition.hpp"
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
  /// True when the producer runs in this TaskExecutor: the channel reads its subpartition
  /// directly. Otherwise a remote channel waits for a transport.
  bool local = true;
};

/// Owns the global pool and the partition manager of one TaskExecutor and builds partitions and
/// gates with pools sized by the configuration, as Flink's ResultPartitionFactory and
/// SingleInputGateFactory do.
class network_environment {
public:
  explicit network_environment(network_config config);
  ~network_environment();
  network_environment(const network_environment&) = delete;
  network_environment& operator=(const network_environment&) = delete;

  /// A registered partition with `num_subpartitions` consumers; its pool holds between
  /// subpartitions + 1 and subpartitions × buffers-per-channel + floating-buffers-per-gate
  /// segments.
  expected<std::shared_ptr<result_partition>> create_result_partition(const result_partition_id& id,
                                                                      std::size_t num_subpartitions);
  /// A gate with one channel per descriptor, channel i reading `channels[i]`. Remote channels get
  /// their exclusive buffers now and share a floating pool of floating-buffers-per-gate. The
  /// subpartitions are not requested yet: call request_partitions() once the listener is set.
  expected<std::unique_ptr<input_gate>> create_input_gate(std::size_t gate_index,
                                                          const std::vector<channel_descriptor>& channels);

  /// Releases every registered partition (TaskExecutor shutdown).
  void shutdown();

  const network_config& config() const noexcept { return config_; }
  const std::shared_ptr<network_buffer_pool>& global_pool() const noexcept { return global_; }
  result_partition_manager& partition_manager() noexcept { return partitions_; }

private:
  const network_config config_;
  const std::shared_ptr<network_buffer_pool> global_;
  result_partition_manager partitions_;
};

} // namespace flint::network
