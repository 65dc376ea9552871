#pragma once
/// What a TaskExecutor needs from the ExecutionGraph to run one subtask (Flink's
/// TaskDeploymentDescriptor, without the slot and producer locations the scheduler adds).

#include "runtime/common/expected.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace flint::graph {

/// A partition the task produces (Flink's ResultPartitionDeploymentDescriptor).
struct result_partition_deployment_descriptor {
  intermediate_data_set_id result_id;
  std::int32_t partition_number = 0;
  result_partition_type partition_type = result_partition_type::pipelined_bounded;
  /// One per consuming subtask.
  std::int32_t number_of_subpartitions = 0;
  partitioner_kind partitioner = partitioner_kind::forward;
  /// The consumer's key groups, for HASH.
  std::int32_t key_group_max_parallelism = 0;

  friend bool operator==(const result_partition_deployment_descriptor&,
                         const result_partition_deployment_descriptor&) = default;
};

/// One input of the task (Flink's InputGateDeploymentDescriptor): the same subpartition index of
/// each consumed partition.
struct input_gate_deployment_descriptor {
  intermediate_data_set_id consumed_result_id;
  result_partition_type partition_type = result_partition_type::pipelined_bounded;
  std::int32_t consumed_subpartition_index = 0;
  /// Partition numbers (= producer subtask indices) of the consumed partitions, one channel each.
  std::vector<std::int32_t> partition_numbers;

  friend bool operator==(const input_gate_deployment_descriptor&, const input_gate_deployment_descriptor&) = default;
};

/// Everything about one execution attempt the task side needs; the operators come from the
/// JobVertex (by `job_vertex_id`) of the JobGraph the TaskExecutor holds.
struct task_deployment_descriptor {
  graph::job_id job_id;
  graph::job_vertex_id job_vertex_id;
  std::string task_name;
  std::int32_t subtask_index = 0;
  std::int32_t parallelism = 1;
  std::int32_t max_parallelism = 128;
  std::int32_t attempt_number = 0;
  std::vector<result_partition_deployment_descriptor> produced_partitions;
  std::vector<input_gate_deployment_descriptor> input_gates;

  friend bool operator==(const task_deployment_descriptor&, const task_deployment_descriptor&) = default;
};

/// The descriptor of the current attempt of `vertex`.
expected<task_deployment_descriptor> make_task_deployment_descriptor(const execution_graph& graph,
                                                                     std::uint32_t vertex);

} // namespace flint::graph
