#pragma once
/// How the network stack names a produced partition.

#include "runtime/graph/intermediate_result_partition.hpp"

#include <string>

namespace flint::network {

/// The intermediate data set and the producer's partition number (Flink's
/// IntermediateResultPartitionID; the execution attempt is implied by the registering TaskExecutor).
using result_partition_id = graph::intermediate_result_partition_id;

/// "<data set id>#<partition number>" for messages and logs.
inline std::string to_string(const result_partition_id& id) {
  return id.result.to_string() + "#" + std::to_string(id.partition_number);
}

} // namespace flint::network
