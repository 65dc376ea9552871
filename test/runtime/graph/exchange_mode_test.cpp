// ResultPartitionTypes by shuffle mode and global data exchange mode (§3.3), and the pipelined
// regions they make.

#include "graph_test_util.hpp"

#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/job_graph_generator.hpp"

using namespace flint;
using namespace flint::graph;
using flint::test::value_of;

namespace {

std::int64_t plus_one(const std::int64_t& x) {
  return x + 1;
}

/// Source -FORWARD-> a -RESCALE-> b -HASH-> Keyed Reduce -> Sink, every exchange non-chained,
/// parallelism 2 throughout.
graph::job_graph three_exchanges(global_data_exchange_mode mode) {
  api::stream_execution_environment env(test::parallelism(2));
  env.set_global_data_exchange_mode(mode);
  env.generate_sequence(0, 99)
    .map(plus_one)
    .name("a")
    .start_new_chain()
    .rescale()
    .map(plus_one)
    .name("b")
    .key_by([](const std::int64_t& x) { return x % 7; })
    .reduce([](const std::int64_t& x, const std::int64_t& y) { return x + y; })
    .print();
  return value_of(env.get_job_graph());
}

/// Result type per ship strategy.
std::map<std::string, result_partition_type> types_by_strategy(const graph::job_graph& job) {
  std::map<std::string, result_partition_type> out;
  for (const auto& edge : job.edges)
    out[edge.ship_strategy_name] = job.data_sets[edge.source].result_type;
  return out;
}

constexpr auto pipelined = result_partition_type::pipelined_bounded;
constexpr auto blocking = result_partition_type::blocking;

} // namespace

TEST_CASE("the pipeline under test has a FORWARD, a RESCALE and a HASH exchange") {
  auto job = three_exchanges(global_data_exchange_mode::all_edges_pipelined);
  CHECK(test::vertex_names(job)
        == std::vector<std::string>{"Keyed Reduce -> Sink: Print to Std. Out", "b", "a",
                                    "Source: Sequence Source"});
  auto types = types_by_strategy(job);
  REQUIRE(types.size() == 3);
  CHECK(types.count("FORWARD") == 1);
  CHECK(types.count("RESCALE") == 1);
  CHECK(types.count("HASH") == 1);
  for (const auto& edge : job.edges)
    CHECK(edge.pattern
          == (edge.ship_strategy_name == "HASH" ? distribution_pattern::all_to_all
                                                : distribution_pattern::pointwise));
}

TEST_CASE("ALL_EDGES_PIPELINED pipelines every edge into one region") {
  auto job = three_exchanges(global_data_exchange_mode::all_edges_pipelined);
  auto types = types_by_strategy(job);
  CHECK(types.at("FORWARD") == pipelined);
  CHECK(types.at("RESCALE") == pipelined);
  CHECK(types.at("HASH") == pipelined);
  auto eg = value_of(execution_graph::build(job));
  CHECK(eg.regions().size() == 1);
}

TEST_CASE("ALL_EDGES_BLOCKING blocks every edge and gives each subtask its own region") {
  auto job = three_exchanges(global_data_exchange_mode::all_edges_blocking);
  auto types = types_by_strategy(job);
  CHECK(types.at("FORWARD") == blocking);
  CHECK(types.at("RESCALE") == blocking);
  CHECK(types.at("HASH") == blocking);
  auto eg = value_of(execution_graph::build(job));
  CHECK(eg.vertices().size() == 8);
  CHECK(eg.regions().size() == 8);
}

TEST_CASE("FORWARD_EDGES_PIPELINED pipelines only FORWARD edges") {
  auto job = three_exchanges(global_data_exchange_mode::forward_edges_pipelined);
  auto types = types_by_strategy(job);
  CHECK(types.at("FORWARD") == pipelined);
  CHECK(types.at("RESCALE") == blocking);
  CHECK(types.at("HASH") == blocking);
  // {source i, a i} for i = 0, 1; then b and the reduce subtasks alone.
  auto eg = value_of(execution_graph::build(job));
  CHECK(eg.regions().size() == 6);
  for (const auto& region : eg.regions())
    CHECK(region.vertices.size() == (eg.vertices()[region.vertices[0]].job_vertex == 0 ? 2u : 1u));
}

TEST_CASE("POINTWISE_EDGES_PIPELINED pipelines FORWARD and RESCALE edges") {
  auto job = three_exchanges(global_data_exchange_mode::pointwise_edges_pipelined);
  auto types = types_by_strategy(job);
  CHECK(types.at("FORWARD") == pipelined);
  CHECK(types.at("RESCALE") == pipelined);
  CHECK(types.at("HASH") == blocking);
  // {source i, a i, b i} for i = 0, 1; the blocking HASH edge splits off each reduce subtask.
  auto eg = value_of(execution_graph::build(job));
  REQUIRE(eg.regions().size() == 4);
  CHECK(eg.regions()[0].vertices.size() == 3);
  CHECK(eg.regions()[1].vertices.size() == 3);
  CHECK(eg.regions()[2].vertices.size() == 1);
  CHECK(eg.regions()[3].vertices.size() == 1);
  CHECK(eg.vertices()[eg.regions()[0].vertices[0]].region == 0);
}

TEST_CASE("an explicit shuffle mode overrides the global data exchange mode") {
  stream_partitioner rebalance{partitioner_kind::rebalance};
  for (auto mode : {global_data_exchange_mode::all_edges_blocking,
                    global_data_exchange_mode::all_edges_pipelined,
                    global_data_exchange_mode::forward_edges_pipelined,
                    global_data_exchange_mode::pointwise_edges_pipelined}) {
    CHECK(determine_result_partition_type(rebalance, shuffle_mode::pipelined, mode) == pipelined);
    CHECK(determine_result_partition_type(rebalance, shuffle_mode::batch, mode) == blocking);
  }
  CHECK(determine_result_partition_type(rebalance, shuffle_mode::undefined,
                                        global_data_exchange_mode::all_edges_pipelined)
        == pipelined);

  api::stream_execution_environment env(test::parallelism(2));
  env.set_global_data_exchange_mode(global_data_exchange_mode::all_edges_blocking);
  env.generate_sequence(0, 9)
    .partition({partitioner_kind::rebalance}, shuffle_mode::pipelined)
    .print();
  auto job = value_of(env.get_job_graph());
  REQUIRE(job.data_sets.size() == 1);
  CHECK(job.data_sets[0].result_type == pipelined);
}

TEST_CASE("wordcount with blocking edges has one region per subtask") {
  api::stream_execution_environment env(test::parallelism(2));
  env.set_global_data_exchange_mode(global_data_exchange_mode::all_edges_blocking);
  env.from_elements(std::string("to be"), std::string("or not"))
    .flat_map([](const std::string& s) { return std::vector<std::string>{s}; })
    .map([](const std::string& w) { return std::pair<std::string, int>(w, 1); })
    .key_by<0>()
    .sum<1>()
    .print();
  auto eg = value_of(execution_graph::build(value_of(env.get_job_graph())));
  CHECK(eg.vertices().size() == 5);
  CHECK(eg.regions().size() == 5);
}
