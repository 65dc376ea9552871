#pragma once
/// Makes the result partitions of a TaskExecutor's tasks (Flink's ResultPartitionFactory).

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/network/file_channel_manager.hpp"
#include "runtime/network/memory_budget.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_id.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace flint::network {

/// A partition of `num_subpartitions` gets a pool of between subpartitions + 1 and
/// subpartitions × buffers-per-channel + floating-buffers-per-gate segments of the global pool.
/// A PIPELINED one gets pipelined subpartitions; a BLOCKING one bounded blocking subpartitions
/// that keep data on the heap while the shared memory budget lasts and spill to
/// `<tmp dir>/<folder>/job-<job id>/<result>-<n>.<subpartition>.spill` after.
class result_partition_factory {
public:
  /// `files` and `blocking_memory` are shared by every partition made (the owner keeps `files`
  /// alive longer than them).
  result_partition_factory(const network_config& config,
                           std::shared_ptr<network_buffer_pool> global, file_channel_manager& files,
                           std::shared_ptr<memory_budget> blocking_memory);

  /// A new partition, not registered anywhere. A blocking partition's spill folder is made now,
  /// so an unusable `io.tmp.dirs` fails here with the path in the message.
  expected<std::shared_ptr<result_partition>> create(const graph::job_id& job,
                                                     const result_partition_id& id,
                                                     std::size_t num_subpartitions,
                                                     graph::result_partition_type type) const;

  /// The spill folder of a job's blocking partitions, under each tmp dir's root.
  static std::string job_folder(const graph::job_id& job);

private:
  const network_config config_;
  std::shared_ptr<network_buffer_pool> global_;
  file_channel_manager& files_;
  std::shared_ptr<memory_budget> blocking_memory_;
};

} // namespace flint::network
