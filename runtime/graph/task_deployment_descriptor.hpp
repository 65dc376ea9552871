#pragma once
/// What a TaskExecutor needs from the ExecutionGraph to run one subtask (Flink's
/// TaskDeploymentDescriptor; the scheduler adds the producers' locations from their slots).

#include "runtime/common/expected.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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

/// Where the producer of a consumed partition runs (Flink's NettyShuffleDescriptor with its
/// ConnectionID): its TaskExecutor and the data address of that TaskExecutor's partition server.
/// A data port of 0 means "in this process" (a MiniCluster without remote channels).
struct producer_location {
  std::string resource_id;
  std::string host;
  std::uint16_t data_port = 0;

  friend bool operator==(const producer_location&, const producer_location&) = default;
};

/// One input of the task (Flink's InputGateDeploymentDescriptor): the same subpartition index of
/// each consumed partition.
struct input_gate_deployment_descriptor {
  intermediate_data_set_id consumed_result_id;
  result_partition_type partition_type = result_partition_type::pipelined_bounded;
  std::int32_t consumed_subpartition_index = 0;
  /// Partition numbers (= producer subtask indices) of the consumed partitions, one channel each.
  std::vector<std::int32_t> partition_numbers;
  /// Per channel (same order as partition_numbers), where its producer runs; empty when no
  /// location is known (every producer is then in this process).
  std::vector<producer_location> producer_locations;

  friend bool operator==(const input_gate_deployment_descriptor&,
                         const input_gate_deployment_descriptor&) = default;
};

/// The JobMaster's checkpoint settings, as far as a task needs them.
struct task_checkpoint_options {
  checkpointing_mode mode = checkpointing_mode::none;
  /// `<state.checkpoints.dir>/<job id>`: where the task writes its state files (into
  /// `chk-<n>/`); empty: the state travels inline to the JobMaster (its memory is the storage).
  std::string storage_dir;
  /// `state.backend.type` (hashmap, rocksdb) and `state.backend.incremental`.
  std::string state_backend = "hashmap";
  bool incremental = false;
  /// The `state.backend.rocksdb.*` keys the job runs with, as the JobMaster resolved them (the
  /// job's own over the cluster's, as Flink merges a job's configuration over the cluster's):
  /// the task opens its backend with these (state::keyed_state_backend_options_from), so a job's
  /// `writebuffer.size` or `cache.size` reaches RocksDB. Unset keys: Flink's defaults.
  std::map<std::string, std::string> state_backend_configuration;

  friend bool operator==(const task_checkpoint_options&, const task_checkpoint_options&) = default;
};

/// Everything about one execution attempt the task side needs; the operators come from the
/// JobVertex (by `job_vertex_id`) of the JobGraph the TaskExecutor holds.
struct task_deployment_descriptor {
  graph::job_id job_id;
  /// The ExecutionGraph the attempt belongs to: with the vertex and attempt number, its
  /// execution_attempt_id.
  graph::execution_graph_id execution_graph_id;
  /// The job's name, for the task's metric scope (`job_name`).
  std::string job_name;
  graph::job_vertex_id job_vertex_id;
  std::string task_name;
  std::int32_t subtask_index = 0;
  std::int32_t parallelism = 1;
  std::int32_t max_parallelism = 128;
  std::int32_t attempt_number = 0;
  std::vector<result_partition_deployment_descriptor> produced_partitions;
  std::vector<input_gate_deployment_descriptor> input_gates;
  task_checkpoint_options checkpointing;
  /// The state it starts from, when it is restored from a checkpoint or savepoint.
  std::optional<state::task_restore> restore;
  /// The job's code as submitted (job_graph::code): what the TaskExecutor checks the package and
  /// library it loads against.
  job_code_hashes code;

  friend bool operator==(const task_deployment_descriptor&,
                         const task_deployment_descriptor&) = default;
};

/// Where the execution vertex with this index runs, if it has a slot.
using producer_locator = std::function<std::optional<producer_location>(std::uint32_t vertex)>;

/// The descriptor of the current attempt of `vertex`. With `locate`, each input gate carries its
/// producers' locations (a producer without one gets the default: this process).
expected<task_deployment_descriptor> make_task_deployment_descriptor(
  const execution_graph& graph, std::uint32_t vertex, const producer_locator& locate = {});

} // namespace flint::graph
