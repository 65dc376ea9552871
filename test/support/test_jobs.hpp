#pragma once
/// Small programs for control-plane tests, built through the real DataStream API.

#include <cstdint>

#include "api/api.hpp"

namespace flint::test {

/// Sequence source → rebalance → map → rebalance → print at `parallelism`: three JobVertices
/// of `parallelism` subtasks each, all in the default slot sharing group.
inline graph::job_graph three_vertex_job(int parallelism, std::uint64_t id = 1) {
  api::stream_execution_environment env;
  env.set_parallelism(parallelism);
  env.set_job_id(graph::job_id{0xF1, id});
  env.generate_sequence(1, 100)
    .rebalance()
    .map([](const std::int64_t& x) { return x * 2; })
    .rebalance()
    .print();
  auto job = env.get_job_graph("three vertices");
  if (!job)
    throw std::logic_error(job.error().to_string());
  return std::move(*job);
}

} // namespace flint::test
