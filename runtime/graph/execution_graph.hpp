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
#include "runtime/graph/consumed_partition_group.hpp"
#include "runtime/graph/consumer_vertex_group.hpp"
#include "runtime/graph/execution.hpp"
#include "runtime/graph/execution_job_vertex.hpp"
#include "runtime/graph/execution_vertex.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/intermediate_result.hpp"
#include "runtime/graph/intermediate_result_partition.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/job_status.hpp"
#include "runtime/graph/pipelined_region.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flint::graph {

/// The runtime view of a JobGraph.
class execution_graph {
public:
  /// Builds the graph (§5.1.1 steps 4–6): sorts the JobVertices topologically, creates
  /// ExecutionJobVertices, ExecutionVertices, results and partitions, connects them POINTWISE or
  /// ALL_TO_ALL, and computes the pipelined regions. Fails on an invalid JobGraph. The graph gets
  /// a random id, as Flink's DefaultExecutionGraph does (every attempt id carries it).
  static expected<execution_graph> build(job_graph job);
  /// The same with a given id (tests that need the attempt ids to be known in advance).
  static expected<execution_graph> build(job_graph job, execution_graph_id id);

  /// Random per graph: a new graph of the same job (a new JobManager leadership) has another.
  const execution_graph_id& id() const { return id_; }
  const graph::job_graph& job_graph() const { return job_; }

  /// In topological order.
  const std::vector<execution_job_vertex>& job_vertices() const { return job_vertices_; }
  const std::vector<execution_vertex>& vertices() const { return vertices_; }
  const std::vector<intermediate_result>& results() const { return results_; }
  const std::vector<intermediate_result_partition>& partitions() const { return partitions_; }
  const std::vector<consumed_partition_group>& consumed_partition_groups() const {
    return consumed_groups_;
  }
  const std::vector<consumer_vertex_group>& consumer_vertex_groups() const {
    return consumer_groups_;
  }
  const std::vector<pipelined_region>& regions() const { return regions_; }

  /// The ExecutionJobVertex of a JobVertex id, if any.
  std::optional<std::uint32_t> find_job_vertex(const job_vertex_id& id) const;
  /// The JobVertex behind an ExecutionJobVertex.
  const job_vertex& job_vertex_of(std::uint32_t ejv) const {
    return job_.vertices[job_vertices_[ejv].job_vertex];
  }

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
  execution_graph(graph::job_graph job, execution_graph_id id) : id_(id), job_(std::move(job)) {}
  expected<unit> create_vertices(const std::vector<std::size_t>& order);
  void connect_all_to_all(std::uint32_t consumer, std::uint32_t result);
  void connect_pointwise(std::uint32_t consumer, std::uint32_t result);
  void compute_pipelined_regions();

  execution_graph_id id_;
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
