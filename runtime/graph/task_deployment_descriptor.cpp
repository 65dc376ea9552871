#include "runtime/graph/task_deployment_descriptor.hpp"

namespace flint::graph {

expected<task_deployment_descriptor> make_task_deployment_descriptor(
  const execution_graph& graph, std::uint32_t vertex, const producer_locator& locate) {
  if (vertex >= graph.vertices().size())
    return make_error(errc::not_found, "no execution vertex " + std::to_string(vertex));
  const execution_vertex& ev = graph.vertices()[vertex];
  const execution_job_vertex& ejv = graph.job_vertices()[ev.job_vertex];
  const job_graph& job = graph.job_graph();

  task_deployment_descriptor tdd;
  tdd.job_id = job.job_id;
  tdd.execution_graph_id = graph.id();
  tdd.job_name = job.name;
  tdd.code = job.code;
  tdd.job_vertex_id = graph.job_vertex_of(ev.job_vertex).id;
  tdd.task_name = graph.task_name_with_subtask(vertex);
  tdd.subtask_index = ev.subtask_index;
  tdd.parallelism = ejv.parallelism;
  tdd.max_parallelism = ejv.max_parallelism;
  tdd.attempt_number = ev.current_execution.attempt_number();

  for (std::uint32_t r : ejv.produced_results) {
    const intermediate_result& result = graph.results()[r];
    std::uint32_t partition = result.first_partition + static_cast<std::uint32_t>(ev.subtask_index);
    result_partition_deployment_descriptor produced;
    produced.result_id = result.id;
    produced.partition_number = ev.subtask_index;
    produced.partition_type = result.result_type;
    produced.number_of_subpartitions =
      static_cast<std::int32_t>(graph.number_of_subpartitions(partition));
    // The data set's one consumer edge carries the partitioner.
    for (const auto& data_set : job.data_sets)
      if (data_set.id == result.id) {
        const job_edge& edge = job.edges[data_set.consumers.front()];
        produced.partitioner = edge.partitioner;
        produced.key_group_max_parallelism = edge.key_group_max_parallelism;
        break;
      }
    tdd.produced_partitions.push_back(produced);
  }

  for (std::uint32_t g : ev.consumed_partition_groups) {
    const consumed_partition_group& group = graph.consumed_partition_groups()[g];
    const intermediate_result& result = graph.results()[group.result];
    input_gate_deployment_descriptor gate;
    gate.consumed_result_id = result.id;
    gate.partition_type = result.result_type;
    // Consumers of a partition are neighbours, so the offset in their group is a unique
    // subpartition index.
    const auto& consumers =
      graph
        .consumer_vertex_groups()[graph.partitions()[group.first_partition].consumer_vertex_group];
    gate.consumed_subpartition_index = static_cast<std::int32_t>(vertex - consumers.first_vertex);
    gate.partition_numbers.reserve(group.size);
    for (std::uint32_t p = 0; p < group.size; ++p) {
      const auto& partition = graph.partitions()[group.first_partition + p];
      gate.partition_numbers.push_back(static_cast<std::int32_t>(partition.partition_number));
      if (locate)
        gate.producer_locations.push_back(locate(partition.producer).value_or(producer_location{}));
    }
    tdd.input_gates.push_back(std::move(gate));
  }
  return tdd;
}

} // namespace flint::graph
