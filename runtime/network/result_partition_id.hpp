#pragma once
/// How the network stack names a produced partition.

#include "runtime/graph/intermediate_result_partition.hpp"

#include <string>

namespace flint::network {

/// The intermediate data set and the producer's partition number (Flink's
/// IntermediateResultPartitionID). Both are hashes of the topology, so two jobs of one shape have
/// equal ids: the shuffle environment keeps partitions per job, and every lookup names the job.
/// Unlike Flink's ResultPartitionID it does not name the producer's attempt: a new attempt starts
/// only once the old one ended (and a new JobManager leader gets a TaskExecutor's slots only once
/// the tasks of the old one ended there), and it replaces the old attempt's partition.
using result_partition_id = graph::intermediate_result_partition_id;

/// "<data set id>#<partition number>" for messages and logs.
inline std::string to_string(const result_partition_id& id) {
  return id.result.to_string() + "#" + std::to_string(id.partition_number);
}

} // namespace flint::network
