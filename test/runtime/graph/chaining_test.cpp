// The eight chaining conditions of §3.2: each, broken alone, breaks exactly its chain.
//
// The base pipeline `Source: Sequence Source -> a -> b -> Sink: Print to Std. Out` at
// parallelism 2 chains into one JobVertex; every test changes one thing and checks that one edge
// stops chaining, for the expected reason, and every other edge still chains.

#include "graph_test_util.hpp"

#include "runtime/graph/job_graph_generator.hpp"

using namespace flint;
using namespace flint::graph;
using flint::test::value_of;
using flint::test::verdicts;
using flint::test::vertex_names;

namespace {

constexpr const char* src = "Source: Sequence Source";
constexpr const char* sink = "Sink: Print to Std. Out";

std::int64_t plus_one(const std::int64_t& x) {
  return x + 1;
}

/// Every edge chains except `broken`, which fails with `why`.
void check_only_broken(const stream_graph& g, const std::string& broken, chaining_verdict why) {
  auto all = verdicts(g);
  REQUIRE(all.count(broken) == 1);
  for (const auto& [edge, verdict] : all) {
    INFO(edge);
    CHECK(verdict == (edge == broken ? why : chaining_verdict::chainable));
  }
}

} // namespace

TEST_CASE("the base pipeline chains into one job vertex") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99).map(plus_one).name("a").map(plus_one).name("b").print();
  auto g = value_of(env.get_stream_graph());
  for (const auto& [edge, verdict] : verdicts(g))
    CHECK_MESSAGE(verdict == chaining_verdict::chainable, edge);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job) == std::vector<std::string>{std::string(src) + " -> a -> b -> " + sink});
  CHECK(job.edges.empty());
}

TEST_CASE("chaining condition 1: a downstream node with two inputs starts a chain") {
  api::stream_execution_environment env(test::parallelism(2));
  auto other = env.generate_sequence(100, 199).name("Other Source");
  env.generate_sequence(0, 99)
    .union_with(other)
    .map(plus_one)
    .name("a")
    .map(plus_one)
    .name("b")
    .print();
  auto g = value_of(env.get_stream_graph());
  auto all = verdicts(g);
  CHECK(all.at(std::string(src) + " -> a") == chaining_verdict::downstream_has_several_inputs);
  CHECK(all.at("Source: Other Source -> a") == chaining_verdict::downstream_has_several_inputs);
  CHECK(all.at("a -> b") == chaining_verdict::chainable);
  CHECK(all.at(std::string("b -> ") + sink) == chaining_verdict::chainable);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("a -> b -> ") + sink, "Source: Other Source", src});
}

TEST_CASE("chaining condition 2: different slot sharing groups do not chain") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99)
    .map(plus_one)
    .name("a")
    .map(plus_one)
    .name("b")
    .slot_sharing_group("other")
    .print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, "a -> b", chaining_verdict::different_slot_sharing_groups);
  // The sink inherits its input's group.
  CHECK(g.node(4).slot_sharing_group == "other");
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("b -> ") + sink, std::string(src) + " -> a"});
  REQUIRE(job.slot_sharing_groups.size() == 2);
  CHECK(job.slot_sharing_groups[job.vertices[0].slot_sharing_group].name == "other");
  CHECK(job.slot_sharing_groups[job.vertices[1].slot_sharing_group].name == "default");
}

TEST_CASE("chaining condition 3: an upstream operator that never chains ends its chain") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99)
    .disable_chaining()
    .map(plus_one)
    .name("a")
    .map(plus_one)
    .name("b")
    .print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, std::string(src) + " -> a", chaining_verdict::upstream_never_chains);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job) == std::vector<std::string>{std::string("a -> b -> ") + sink, src});
}

TEST_CASE("chaining condition 4: a downstream operator that is not ALWAYS starts a chain") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99)
    .map(plus_one)
    .name("a")
    .map(plus_one)
    .name("b")
    .start_new_chain()
    .print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, "a -> b", chaining_verdict::downstream_not_always);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("b -> ") + sink, std::string(src) + " -> a"});
  REQUIRE(job.edges.size() == 1);
  CHECK(job.edges[0].ship_strategy_name == "FORWARD");
  CHECK(job.edges[0].pattern == distribution_pattern::pointwise);
}

TEST_CASE("chaining condition 5: a partitioner other than FORWARD does not chain") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99).map(plus_one).name("a").rebalance().map(plus_one).name("b").print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, "a -> b", chaining_verdict::partitioner_not_forward);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("b -> ") + sink, std::string(src) + " -> a"});
  REQUIRE(job.edges.size() == 1);
  CHECK(job.edges[0].ship_strategy_name == "REBALANCE");
  CHECK(job.edges[0].pattern == distribution_pattern::all_to_all);
}

TEST_CASE("chaining condition 6: a BATCH shuffle does not chain") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 99)
    .map(plus_one)
    .name("a")
    .partition({partitioner_kind::forward}, shuffle_mode::batch)
    .map(plus_one)
    .name("b")
    .print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, "a -> b", chaining_verdict::shuffle_mode_batch);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("b -> ") + sink, std::string(src) + " -> a"});
  REQUIRE(job.data_sets.size() == 1);
  CHECK(job.data_sets[0].result_type == result_partition_type::blocking);
}

TEST_CASE("chaining condition 7: different parallelisms do not chain") {
  // Through the API a parallelism change always brings REBALANCE (condition 5 too), so the
  // graph is changed by hand after the FORWARD edges exist, as Flink's StreamNode#setParallelism
  // allows.
  api::stream_execution_environment env(test::parallelism(2));
  auto b = env.generate_sequence(0, 99).map(plus_one).name("a").map(plus_one).name("b");
  auto print = b.print();
  auto g = value_of(env.get_stream_graph());
  g.node(b.id()).parallelism = 3;
  g.node(print.id()).parallelism = 3;
  check_only_broken(g, "a -> b", chaining_verdict::parallelism_differs);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job)
        == std::vector<std::string>{std::string("b -> ") + sink, std::string(src) + " -> a"});
  CHECK(job.vertices[0].parallelism == 3);
  CHECK(job.vertices[1].parallelism == 2);
}

TEST_CASE("chaining condition 8: chaining disabled for the job chains nothing") {
  api::stream_execution_environment env(test::parallelism(2));
  env.disable_operator_chaining();
  env.generate_sequence(0, 99).print();
  auto g = value_of(env.get_stream_graph());
  check_only_broken(g, std::string(src) + " -> " + sink, chaining_verdict::chaining_disabled);
  auto job = value_of(create_job_graph(g));
  CHECK(vertex_names(job) == std::vector<std::string>{sink, src});
}

TEST_CASE("an operator with two chainable outputs names both branches") {
  api::stream_execution_environment env(test::parallelism(2));
  auto a = env.generate_sequence(0, 99).map(plus_one).name("a");
  a.map(plus_one).name("b").print();
  a.filter([](const std::int64_t& x) { return x > 0; }).print();
  auto job = value_of(create_job_graph(value_of(env.get_stream_graph())));
  REQUIRE(job.vertices.size() == 1);
  CHECK(job.vertices[0].name
        == std::string(src) + " -> a -> (b -> " + sink + ", Filter -> " + sink + ")");
  CHECK(job.vertices[0].operators.size() == 6);
  CHECK(job.vertices[0].operators[0].chain_index == 0);
}
