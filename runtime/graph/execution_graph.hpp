#pragma once
/// The third of the four graphs, built by the JobMaster (Flink's DefaultExecutionGraph, §5.1).
///
/// Every JobVertex becomes an ExecutionJobVertex with `parallelism` ExecutionVertices, every
/// IntermediateDataSet an IntermediateResult with one partition per producer subtask. Edges are
/// not stored one by one: like Flink 1.14's EdgeManager, consumers of an ALL_TO_ALL edge share a
/// single consumed_partition_group and the partitions share a single consumer_vertex_group, so
/// memory grows with vertices, not with producers x consumers. Both connection patterns only ever
/// group neighbouring subtasks, so a group is stored as a range of indices.
///
/// All cross references are indices into the flat vectors below.

#include "runtime/common/expected.hpp"
#include "runtime/graph/execution.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/job_status.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// Names a subtask: the JobVertex and the subtask index.
struct execution_vertex_id {
  job_vertex_id job_vertex;
  std::int32_t subtask_index = 0;
  friend auto operator<=>(const execution_vertex_id&, const execution_vertex_id&) = default;
};

/// Names a partition: the result and the producing subtask.
struct intermediate_result_partition_id {
  intermediate_data_set_id result;
  std::int32_t partition_number = 0;
  friend auto operator<=>(const intermediate_result_partition_id&, const intermediate_result_partition_id&) = default;
};

/// A JobVertex at runtime.
struct execution_job_vertex {
  /// Index into `job_graph::vertices`.
  std::uint32_t job_vertex = 0;
  std::int32_t parallelism = 1;
  /// Resolved: the vertex's, else the job's, else Flink's default for the parallelism.
  std::int32_t max_parallelism = 128;
  /// Its subtasks are `execution_graph::vertices()[first_vertex, first_vertex + parallelism)`.
  std::uint32_t first_vertex = 0;
  /// Indices into `execution_graph::results()`, one per produced data set.
  std::vector<std::uint32_t> produced_results;
  /// Indices into `execution_graph::results()`, by input number.
  std::vector<std::uint32_t> inputs;
};

/// An IntermediateDataSet at runtime.
struct intermediate_result {
  intermediate_data_set_id id;
  /// Index into `execution_graph::job_vertices()`.
  std::uint32_t producer = 0;
  /// The consuming ExecutionJobVertex (each data set has one consumer edge).
  std::uint32_t consumer = 0;
  result_partition_type result_type = result_partition_type::pipelined_bounded;
  distribution_pattern pattern = distribution_pattern::all_to_all;
  /// Its partitions are `partitions()[first_partition, first_partition + num_partitions)`.
  std::uint32_t first_partition = 0;
  std::uint32_t num_partitions = 0;
};

/// The part of a result one producer subtask writes.
struct intermediate_result_partition {
  /// Index into `execution_graph::results()`.
  std::uint32_t result = 0;
  /// Equals the producer's subtask index.
  std::uint32_t partition_number = 0;
  /// Index into `execution_graph::vertices()`.
  std::uint32_t producer = 0;
  /// Index into `execution_graph::consumer_vertex_groups()`.
  std::uint32_t consumer_vertex_group = 0;
};

/// Partitions of one result that a consumer reads together; shared by every consumer that reads
/// exactly these (all consumers of an ALL_TO_ALL edge).
struct consumed_partition_group {
  std::uint32_t result = 0;
  /// Global indices into `partitions()`: `[first_partition, first_partition + size)`.
  std::uint32_t first_partition = 0;
  std::uint32_t size = 0;
};

/// Subtasks that read one partition; shared by every partition read by exactly these.
struct consumer_vertex_group {
  /// Global indices into `vertices()`: `[first_vertex, first_vertex + size)`.
  std::uint32_t first_vertex = 0;
  std::uint32_t size = 0;
};

/// One subtask.
struct execution_vertex {
  /// Index into `execution_graph::job_vertices()`.
  std::uint32_t job_vertex = 0;
  std::int32_t subtask_index = 0;
  /// Indices into `consumed_partition_groups()`, by input number.
  std::vector<std::uint32_t> consumed_partition_groups;
  /// Index into `regions()`.
  std::uint32_t region = 0;
  /// The current attempt; earlier attempts are only counted.
  graph::execution current_execution;
};

/// Subtasks connected by pipelined exchanges: they must be scheduled, and restarted, together.
struct pipelined_region {
  /// Indices into `vertices()`, ascending.
  std::vector<std::uint32_t> vertices;
};

/// The runtime view of a JobGraph.
class execution_graph {
public:
  /// Builds the graph (§5.1.1 steps 4–6): sorts the JobVertices topologically, creates
  /// ExecutionJobVertices, ExecutionVertices, results and partitions, connects them POINTWISE or
  /// ALL_TO_ALL, and computes the pipelined regions. Fails on an invalid JobGraph.
  static expected<execution_graph> build(job_graph job);

  const graph::job_graph& job_graph() const { return job_; }

  /// In topological order.
  const std::vector<execution_job_vertex>& job_vertices() const { return job_vertices_; }
  const std::vector<execution_vertex>& vertices() const { return vertices_; }
  const std::vector<intermediate_result>& results() const { return results_; }
  const std::vector<intermediate_result_partition>& partitions() const { return partitions_; }
  const std::vector<consumed_partition_group>& consumed_partition_groups() const { return consumed_groups_; }
  const std::vector<consumer_vertex_group>& consumer_vertex_groups() const { return consumer_groups_; }
  const std::vector<pipelined_region>& regions() const { return regions_; }

  /// The ExecutionJobVertex of a JobVertex id, if any.
  std::optional<std::uint32_t> find_job_vertex(const job_vertex_id& id) const;
  /// The JobVertex behind an ExecutionJobVertex.
  const job_vertex& job_vertex_of(std::uint32_t ejv) const { return job_.vertices[job_vertices_[ejv].job_vertex]; }

  /// E.g. "aggregation -> Sink: Print to Std. Out (1/2)".
  std::string task_name_with_subtask(std::uint32_t vertex) const;
  execution_vertex_id vertex_id(std::uint32_t vertex) const;
  intermediate_result_partition_id partition_id(std::uint32_t partition) const;
  execution_attempt_id attempt_id(std::uint32_t vertex) const;
  /// Subpartitions of a partition: one per consuming subtask.
  std::uint32_t number_of_subpartitions(std::uint32_t partition) const {
    return consumer_groups_[partitions_[partition].consumer_vertex_group].size;
  }

  /// Moves the current attempt of `vertex` along a legal ExecutionState transition.
  expected<unit> transition_execution(std::uint32_t vertex, execution_state to);
  /// Starts a new attempt of `vertex` (Flink's resetForNewExecution); only from a terminal state.
  expected<unit> reset_for_new_execution(std::uint32_t vertex);

  job_status state() const { return state_; }
  /// Moves the job along a legal JobStatus transition.
  expected<unit> transition_state(job_status to);

private:
  explicit execution_graph(graph::job_graph job) : job_(std::move(job)) {}
  expected<unit> create_vertices(const std::vector<std::size_t>& order);
  void connect_all_to_all(std::uint32_t consumer, std::uint32_t result);
  void connect_pointwise(std::uint32_t consumer, std::uint32_t result);
  void compute_pipelined_regions();

  graph::job_graph job_;
  std::vector<execution_job_vertex> job_vertices_;
  std::vector<execution_vertex> vertices_;
  std::vector<intermediate_result> results_;
  std::vector<intermediate_result_partition> partitions_;
  std::vector<consumed_partition_group> consumed_groups_;
  std::vector<consumer_vertex_group> consumer_groups_;
  std::vector<pipelined_region> regions_;
  job_status state_ = job_status::created;
};

} // namespace flint::graph
