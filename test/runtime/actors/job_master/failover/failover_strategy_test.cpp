// Which tasks restart after a failure (Flink's RestartPipelinedRegionFailoverStrategyTest and
// RestartAllFailoverStrategyTest), on ExecutionGraphs of the JobMaster tests' chain jobs.

#include "runtime/actors/job_master/failover/failover_strategy.hpp"

#include "../test_jobs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::job_master::failover;
using graph::result_partition_type;

namespace {

graph::execution_graph build(graph::job_graph job) {
  auto g = graph::execution_graph::build(std::move(job));
  REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
  return std::move(*g);
}

/// "Source: numbers" (p) -> "Map" (p), subtask i feeding only subtask i: two pipelines when p = 2.
graph::job_graph forward_job(int parallelism) {
  auto job = test::chain_job(graph::job_id{1, 1}, {parallelism, parallelism});
  job.edges[0].pattern = graph::distribution_pattern::pointwise;
  job.edges[0].ship_strategy_name = "FORWARD";
  job.edges[0].partitioner = graph::partitioner_kind::forward;
  return job;
}

std::uint32_t vertex(const graph::execution_graph& g, const std::string& task_name_with_subtask) {
  for (std::uint32_t v = 0; v < g.vertices().size(); ++v)
    if (g.task_name_with_subtask(v) == task_name_with_subtask)
      return v;
  FAIL("no task " << task_name_with_subtask);
  return 0;
}

/// The partition a producer subtask writes (each vertex of a chain job produces one result).
std::uint32_t partition_of(const graph::execution_graph& g, const std::string& producer) {
  auto v = vertex(g, producer);
  for (std::uint32_t p = 0; p < g.partitions().size(); ++p)
    if (g.partitions()[p].producer == v)
      return p;
  FAIL("no partition of " << producer);
  return 0;
}

std::vector<std::string> names(const graph::execution_graph& g,
                               const std::vector<std::uint32_t>& vs) {
  std::vector<std::string> out;
  for (auto v : vs)
    out.push_back(g.task_name_with_subtask(v));
  return out;
}

std::vector<std::string> restarted(const failover_strategy& s, const graph::execution_graph& g,
                                   const std::string& failed, std::set<std::uint32_t> lost = {}) {
  auto tasks = s.tasks_needing_restart(vertex(g, failed),
                                       [lost](std::uint32_t p) { return lost.count(p) == 0; });
  CHECK(std::is_sorted(tasks.begin(), tasks.end()));
  return names(g, tasks);
}

using names_t = std::vector<std::string>;

} // namespace

TEST_CASE("a failure in one of two disconnected pipelines restarts only that pipeline") {
  auto g = build(forward_job(2));
  REQUIRE(g.regions().size() == 2);
  restart_pipelined_region_failover_strategy s(g);
  CHECK(restarted(s, g, "Map (2/2)") == names_t{"Source: numbers (2/2)", "Map (2/2)"});
  CHECK(restarted(s, g, "Source: numbers (1/2)") == names_t{"Source: numbers (1/2)", "Map (1/2)"});
}

TEST_CASE("a failure in a pipelined source to map chain restarts the whole region") {
  auto g = build(test::chain_job(graph::job_id{1, 2}, {2, 2}));
  REQUIRE(g.regions().size() == 1);
  restart_pipelined_region_failover_strategy s(g);
  const names_t all{"Source: numbers (1/2)", "Source: numbers (2/2)", "Map (1/2)", "Map (2/2)"};
  CHECK(restarted(s, g, "Map (1/2)") == all);
  CHECK(restarted(s, g, "Source: numbers (2/2)") == all);
}

TEST_CASE("a consumer of an available blocking result restarts alone") {
  auto g = build(test::chain_job(graph::job_id{1, 3}, {2, 2}, {result_partition_type::blocking}));
  REQUIRE(g.regions().size() == 4);
  restart_pipelined_region_failover_strategy s(g);
  CHECK(restarted(s, g, "Map (1/2)") == names_t{"Map (1/2)"});
}

TEST_CASE("a consumer whose blocking input is lost restarts with its producer and its consumers") {
  auto g = build(test::chain_job(graph::job_id{1, 4}, {2, 2}, {result_partition_type::blocking}));
  restart_pipelined_region_failover_strategy s(g);
  // The producer's region is restarted, and with it every region consuming what it produces.
  CHECK(restarted(s, g, "Map (1/2)", {partition_of(g, "Source: numbers (2/2)")})
        == names_t{"Source: numbers (2/2)", "Map (1/2)", "Map (2/2)"});
}

TEST_CASE("a producer of a blocking result restarts with every consumer region") {
  auto g = build(test::chain_job(graph::job_id{1, 5}, {2, 2}, {result_partition_type::blocking}));
  restart_pipelined_region_failover_strategy s(g);
  CHECK(restarted(s, g, "Source: numbers (1/2)")
        == names_t{"Source: numbers (1/2)", "Map (1/2)", "Map (2/2)"});
}

TEST_CASE("lost blocking inputs pull in producers transitively but available ones stop the walk") {
  auto job = test::chain_job(graph::job_id{1, 6}, {1, 1, 1},
                             {result_partition_type::blocking, result_partition_type::blocking});
  auto g = build(std::move(job));
  REQUIRE(g.regions().size() == 3);
  restart_pipelined_region_failover_strategy s(g);
  auto map_output = partition_of(g, "Map (1/1)");
  auto source_output = partition_of(g, "Source: numbers (1/1)");
  CHECK(restarted(s, g, "Sink: collect (1/1)", {map_output})
        == names_t{"Map (1/1)", "Sink: collect (1/1)"});
  CHECK(restarted(s, g, "Sink: collect (1/1)", {map_output, source_output})
        == names_t{"Source: numbers (1/1)", "Map (1/1)", "Sink: collect (1/1)"});
  // The source's output is not consumed by the sink: losing it alone does not matter here.
  CHECK(restarted(s, g, "Sink: collect (1/1)", {source_output}) == names_t{"Sink: collect (1/1)"});
}

TEST_CASE("a pipelined region behind a blocking edge restarts as a whole") {
  // Source -blocking-> Map -pipelined-> Sink: the ALL_TO_ALL pipelined edge ties every Map and
  // Sink subtask into one region.
  auto g =
    build(test::chain_job(graph::job_id{1, 7}, {2, 2, 2}, {result_partition_type::blocking}));
  REQUIRE(g.regions().size() == 3);
  restart_pipelined_region_failover_strategy s(g);
  CHECK(restarted(s, g, "Sink: collect (2/2)")
        == names_t{"Map (1/2)", "Map (2/2)", "Sink: collect (1/2)", "Sink: collect (2/2)"});
  CHECK(restarted(s, g, "Source: numbers (2/2)")
        == names_t{"Source: numbers (2/2)", "Map (1/2)", "Map (2/2)", "Sink: collect (1/2)",
                   "Sink: collect (2/2)"});
}

TEST_CASE("an empty availability check counts every partition as available") {
  auto g = build(test::chain_job(graph::job_id{1, 8}, {2, 2}, {result_partition_type::blocking}));
  restart_pipelined_region_failover_strategy s(g);
  CHECK(names(g, s.tasks_needing_restart(vertex(g, "Map (2/2)"), {})) == names_t{"Map (2/2)"});
}

TEST_CASE("restart all restarts every task whatever failed") {
  auto g = build(forward_job(2));
  restart_all_failover_strategy s(g);
  CHECK(s.name() == "RestartAllFailoverStrategy");
  CHECK(restarted(s, g, "Map (2/2)")
        == names_t{"Source: numbers (1/2)", "Source: numbers (2/2)", "Map (1/2)", "Map (2/2)"});
}

TEST_CASE("the failover strategy is region unless configured full") {
  auto g = build(forward_job(2));
  auto make = [&](std::vector<std::pair<std::string, std::string>> entries) {
    config::configuration c;
    for (auto& [k, v] : entries)
      c.set(k, v);
    auto s = make_failover_strategy(c, g);
    REQUIRE_MESSAGE(s.has_value(), s.error().to_string());
    return (*s)->name();
  };
  CHECK(make({}) == "RestartPipelinedRegionFailoverStrategy");
  CHECK(make({{"jobmanager.execution.failover-strategy", "region"}})
        == "RestartPipelinedRegionFailoverStrategy");
  CHECK(make({{"jobmanager.execution.failover-strategy", "full"}}) == "RestartAllFailoverStrategy");
  CHECK(make({{"jobmanager.execution.failover-strategy", "Full"}}) == "RestartAllFailoverStrategy");
}

TEST_CASE("an unknown failover strategy is an error naming the key and the value") {
  auto g = build(forward_job(2));
  config::configuration c;
  c.set("jobmanager.execution.failover-strategy", "individual", "conf.yaml:3");
  auto s = make_failover_strategy(c, g);
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(s.error().message
        == "Unknown failover strategy 'individual' in jobmanager.execution.failover-strategy "
           "(set in conf.yaml:3); use region or full");
}
