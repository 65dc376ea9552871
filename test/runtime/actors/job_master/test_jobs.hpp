#pragma once
// Small JobGraphs built by hand for the JobMaster and scheduler tests: a chain of vertices with
// chosen parallelisms and exchange types, all in one slot sharing group.

#include <string>
#include <vector>

#include "runtime/graph/job_graph.hpp"

namespace flint::test {

/// "Source" -> "Map" -> ... -> "Sink"-like chain: vertex i has `parallelisms[i]`; the edge after
/// vertex i carries `exchanges[i]` (pipelined when `exchanges` is shorter).
inline graph::job_graph chain_job(graph::job_id id, std::vector<int> parallelisms,
                                  std::vector<graph::result_partition_type> exchanges = {}) {
  graph::job_graph job;
  job.job_id = id;
  job.name = "test job";
  job.slot_sharing_groups.push_back(graph::slot_sharing_group{"default", {}});
  static const char* names[] = {"Source: numbers", "Map", "Sink: collect", "Extra 1", "Extra 2"};
  for (std::size_t i = 0; i < parallelisms.size(); ++i) {
    graph::job_vertex v;
    v.id = graph::job_vertex_id{0xabc0 + i, 0x1000 + i};
    v.name = i < 5 ? names[i] : "Vertex " + std::to_string(i);
    v.parallelism = parallelisms[i];
    v.invokable =
      i == 0 ? graph::task_kind::source_stream_task : graph::task_kind::one_input_stream_task;
    v.slot_sharing_group = 0;
    job.vertices.push_back(v);
    job.slot_sharing_groups[0].vertices.push_back(i);
  }
  for (std::size_t i = 0; i + 1 < parallelisms.size(); ++i) {
    graph::intermediate_data_set ds;
    ds.id = graph::intermediate_data_set_id{0xd5, i};
    ds.producer = i;
    ds.result_type =
      i < exchanges.size() ? exchanges[i] : graph::result_partition_type::pipelined_bounded;
    ds.consumers = {job.edges.size()};
    graph::job_edge e;
    e.source = job.data_sets.size();
    e.target = i + 1;
    e.pattern = graph::distribution_pattern::all_to_all;
    e.ship_strategy_name = "REBALANCE";
    e.partitioner = graph::partitioner_kind::rebalance;
    job.vertices[i].produced_data_sets.push_back(job.data_sets.size());
    job.vertices[i + 1].inputs.push_back(job.edges.size());
    job.data_sets.push_back(ds);
    job.edges.push_back(e);
  }
  return job;
}

} // namespace flint::test
