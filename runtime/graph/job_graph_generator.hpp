#pragma once
/// Turns a StreamGraph into a JobGraph (Flink's StreamingJobGraphGenerator, §3).

#include "runtime/common/expected.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/graph/stream_graph_hasher.hpp"

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace flint::graph {

/// The ResultPartitionType of a non-chained edge (§3.3): PIPELINED_BOUNDED for PIPELINED,
/// BLOCKING for BATCH, and for UNDEFINED whatever the global data exchange mode says.
result_partition_type determine_result_partition_type(const stream_partitioner& partitioner,
                                                      shuffle_mode mode,
                                                      global_data_exchange_mode global_mode);

/// One-shot generator: construct, call `create_job_graph()` once.
class job_graph_generator {
public:
  /// `graph` must outlive the generator. Without `id` the job id is zero; the submitting client
  /// sets a fresh one.
  explicit job_graph_generator(const stream_graph& graph,
                               std::optional<graph::job_id> id = std::nullopt);

  /// Chains operators into JobVertices, connects them, and sets slot sharing, co-location and
  /// checkpointing.
  expected<job_graph> create_job_graph();

private:
  /// Returns the StreamEdges leaving the chain that `current` belongs to (transitive out edges).
  expected<std::vector<std::size_t>> create_chain(int current, int chain_index, int start);
  std::string create_chained_name(int node,
                                  const std::vector<std::size_t>& chainable_outputs) const;
  expected<unit> create_job_vertex(int start);
  expected<unit> connect(int head, std::size_t stream_edge_index);
  expected<unit> set_slot_sharing_and_co_location();
  void configure_checkpointing();

  const stream_graph& stream_;
  job_graph job_;
  std::map<int, node_hash> hashes_;
  std::set<int> built_;
  std::map<int, std::size_t> vertex_of_head_;
  std::map<int, std::string> chained_names_;
  /// Chain head -> its operators, collected as the recursion returns.
  std::map<int, std::vector<chained_operator>> chains_;
  /// StreamNode -> its non-chained StreamEdges.
  std::map<int, std::vector<std::size_t>> non_chained_of_node_;
  std::map<std::size_t, std::size_t> job_edge_of_stream_edge_;
};

/// Convenience: `job_graph_generator(graph, id).create_job_graph()`.
expected<job_graph> create_job_graph(const stream_graph& graph,
                                     std::optional<graph::job_id> id = std::nullopt);

} // namespace flint::graph
