// The seed's Streaming WordCount through all graphs (REFERENCE.md "The worked example").

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/job_graph_generator.hpp"
#include "runtime/graph/json_plan.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

using namespace flint;
using namespace flint::graph;

namespace {

struct wordcount_fixture {
  api::stream_execution_environment env{api::configuration{{"parallelism.default", "2"}}};
  wordcount_fixture() { examples::build_wordcount(env, {}); }

  stream_graph stream() {
    auto g = env.get_stream_graph(examples::wordcount_job_name);
    REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
    return std::move(*g);
  }
  graph::job_graph job() {
    auto g = env.get_job_graph(examples::wordcount_job_name);
    REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
    return std::move(*g);
  }
};

const stream_edge& edge_between(const stream_graph& g, const std::string& from,
                                const std::string& to) {
  for (const auto& e : g.edges())
    if (g.node(e.source_id).operator_name == from && g.node(e.target_id).operator_name == to)
      return e;
  FAIL("no edge " << from << " -> " << to);
  return g.edges().front();
}

// The plan printed in the reference (§5.1.1 step 3), without its random "jid".
constexpr const char* seed_plan = R"({
  "name":"Streaming WordCount",
  "nodes":[
    {"id":"001d41b9f8d4f77b8344bef265584b4b","parallelism":2,"operator":"","operator_strategy":"",
     "description":"aggregation -> Sink: Print to Std. Out",
     "inputs":[{"num":0,"id":"de3774f5946826244eca962825ce5e73","ship_strategy":"HASH","exchange":"pipelined_bounded"}],
     "optimizer_properties":{}},
    {"id":"de3774f5946826244eca962825ce5e73","parallelism":2,"operator":"","operator_strategy":"",
     "description":"Flat Map -> Filter -> Map",
     "inputs":[{"num":0,"id":"bc764cd8ddf7a0cff126f51c16239658","ship_strategy":"REBALANCE","exchange":"pipelined_bounded"}],
     "optimizer_properties":{}},
    {"id":"bc764cd8ddf7a0cff126f51c16239658","parallelism":1,"operator":"","operator_strategy":"",
     "description":"Source: Collection Source","optimizer_properties":{}}
  ]
})";

} // namespace

TEST_CASE_FIXTURE(wordcount_fixture, "wordcount has six stream nodes plus the keyBy virtual node") {
  auto g = stream();
  std::vector<std::string> names;
  for (const auto& [id, node] : g.nodes())
    names.push_back(node.operator_name);
  CHECK(names
        == std::vector<std::string>{"Source: Collection Source", "Flat Map", "Filter", "Map",
                                    "aggregation", "Sink: Print to Std. Out"});
  REQUIRE(g.virtual_partition_nodes().size() == 1);
  const auto& virtual_node = g.virtual_partition_nodes().begin()->second;
  CHECK(g.node(virtual_node.original_id).operator_name == "Map");
  CHECK(virtual_node.partitioner.kind == partitioner_kind::key_group);
  CHECK(g.sources().size() == 1);
  CHECK(g.sinks().size() == 1);

  CHECK(g.edges().size() == 5);
  CHECK(edge_between(g, "Source: Collection Source", "Flat Map").partitioner.kind
        == partitioner_kind::rebalance);
  CHECK(edge_between(g, "Flat Map", "Filter").partitioner.kind == partitioner_kind::forward);
  CHECK(edge_between(g, "Filter", "Map").partitioner.kind == partitioner_kind::forward);
  const auto& hash = edge_between(g, "Map", "aggregation");
  CHECK(hash.partitioner.kind == partitioner_kind::key_group);
  CHECK(to_string(hash.partitioner.kind) == "HASH");
  CHECK(hash.partitioner.max_parallelism == 128);
  REQUIRE(hash.partitioner.key);
  CHECK(hash.partitioner.key->description() == "field 0");
  CHECK(edge_between(g, "aggregation", "Sink: Print to Std. Out").partitioner.kind
        == partitioner_kind::forward);

  for (const auto& [id, node] : g.nodes()) {
    CHECK(node.slot_sharing_group == "default");
    CHECK(node.task_kind
          == (node.operator_name.starts_with("Source") ? task_kind::source_stream_task
                                                       : task_kind::one_input_stream_task));
    CHECK(node.parallelism == (node.operator_name.starts_with("Source") ? 1 : 2));
  }
  CHECK(g.node(2).uid == std::optional<std::string>("flatMap-1"));
}

TEST_CASE_FIXTURE(wordcount_fixture, "wordcount becomes the seed's three job vertices") {
  auto job = this->job();
  REQUIRE(job.vertices.size() == 3);
  CHECK(job.name == "Streaming WordCount");
  // Flink's creation order: a chain after the chains it feeds.
  CHECK(job.vertices[0].name == "aggregation -> Sink: Print to Std. Out");
  CHECK(job.vertices[1].name == "Flat Map -> Filter -> Map");
  CHECK(job.vertices[2].name == "Source: Collection Source");
  CHECK(job.vertices[0].parallelism == 2);
  CHECK(job.vertices[1].parallelism == 2);
  CHECK(job.vertices[2].parallelism == 1);
  CHECK(job.vertices[2].invokable == task_kind::source_stream_task);
  CHECK(job.vertices[1].invokable == task_kind::one_input_stream_task);
  // The ids Flink printed for this very program.
  CHECK(job.vertices[0].id.to_string() == "001d41b9f8d4f77b8344bef265584b4b");
  CHECK(job.vertices[1].id.to_string() == "de3774f5946826244eca962825ce5e73");
  CHECK(job.vertices[2].id.to_string() == "bc764cd8ddf7a0cff126f51c16239658");

  REQUIRE(job.vertices[1].operators.size() == 3);
  CHECK(job.vertices[1].operators[0].name == "Flat Map");
  CHECK(job.vertices[1].operators[0].kind == "flat_map");
  CHECK(job.vertices[1].operators[0].chained_outputs == std::vector<int>{3});
  CHECK(job.vertices[1].operators[2].name == "Map");
  CHECK(job.vertices[1].operators[2].non_chained_outputs.size() == 1);

  REQUIRE(job.edges.size() == 2);
  REQUIRE(job.data_sets.size() == 2);
  const auto& rebalance = job.edges[job.vertices[1].inputs.at(0)];
  const auto& hash = job.edges[job.vertices[0].inputs.at(0)];
  CHECK(rebalance.ship_strategy_name == "REBALANCE");
  CHECK(rebalance.pattern == distribution_pattern::all_to_all);
  CHECK(hash.ship_strategy_name == "HASH");
  CHECK(hash.pattern == distribution_pattern::all_to_all);
  CHECK(hash.key_group_max_parallelism == 128);
  for (const auto& ds : job.data_sets)
    CHECK(ds.result_type == result_partition_type::pipelined_bounded);
  CHECK(job.data_sets[rebalance.source].producer == 2);
  CHECK(job.data_sets[hash.source].producer == 1);

  REQUIRE(job.slot_sharing_groups.size() == 1);
  CHECK(job.slot_sharing_groups[0].name == "default");
  CHECK(job.slot_sharing_groups[0].vertices.size() == 3);
  CHECK(job.co_location_groups.empty());
  CHECK(job.checkpointing.trigger_vertices == std::vector<std::size_t>{2});
  CHECK(job.checkpointing.ack_vertices == std::vector<std::size_t>{0, 1, 2});
  CHECK(job.checkpointing.commit_vertices == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE_FIXTURE(wordcount_fixture, "wordcount's JSON plan has the seed's shape") {
  auto printed = env.get_execution_plan(examples::wordcount_job_name);
  REQUIRE(printed.has_value());
  auto plan = nlohmann::json::parse(*printed);
  CHECK(plan["jid"].get<std::string>() == env.job_id().to_string());
  plan.erase("jid");
  CHECK(plan == nlohmann::json::parse(seed_plan));
  // Field order as Flink writes it.
  auto ordered = nlohmann::ordered_json::parse(*printed);
  std::vector<std::string> keys;
  for (const auto& item : ordered["nodes"][0].items())
    keys.push_back(item.key());
  CHECK(keys
        == std::vector<std::string>{"id", "parallelism", "operator", "operator_strategy",
                                    "description", "inputs", "optimizer_properties"});
}

TEST_CASE_FIXTURE(wordcount_fixture,
                  "wordcount's execution graph has five subtasks and one pipelined region") {
  auto built = execution_graph::build(job());
  REQUIRE_MESSAGE(built.has_value(), built.error().to_string());
  const auto& eg = *built;
  CHECK(eg.job_vertices().size() == 3);
  CHECK(eg.vertices().size() == 5);
  CHECK(eg.partitions().size() == 3);
  CHECK(eg.results().size() == 2);
  // Topological order: source, flat map chain, aggregation chain.
  CHECK(eg.job_vertex_of(0).name == "Source: Collection Source");
  CHECK(eg.job_vertex_of(2).name == "aggregation -> Sink: Print to Std. Out");

  const auto& agg = eg.job_vertices()[2];
  CHECK(eg.task_name_with_subtask(agg.first_vertex)
        == "aggregation -> Sink: Print to Std. Out (1/2)");
  CHECK(eg.task_name_with_subtask(agg.first_vertex + 1)
        == "aggregation -> Sink: Print to Std. Out (2/2)");
  CHECK(eg.task_name_with_subtask(0) == "Source: Collection Source (1/1)");

  // Each aggregation subtask consumes both map partitions, through one shared group.
  const auto& map_result = eg.results()[eg.job_vertices()[1].produced_results.at(0)];
  for (int i = 0; i < 2; ++i) {
    const auto& ev = eg.vertices()[agg.first_vertex + static_cast<std::uint32_t>(i)];
    REQUIRE(ev.consumed_partition_groups.size() == 1);
    const auto& group = eg.consumed_partition_groups()[ev.consumed_partition_groups[0]];
    CHECK(group.first_partition == map_result.first_partition);
    CHECK(group.size == 2);
    for (std::uint32_t p = 0; p < group.size; ++p)
      CHECK(eg.partitions()[group.first_partition + p].producer
            == eg.job_vertices()[1].first_vertex + p);
  }
  CHECK(eg.vertices()[agg.first_vertex].consumed_partition_groups
        == eg.vertices()[agg.first_vertex + 1].consumed_partition_groups);
  for (std::uint32_t p = map_result.first_partition; p < map_result.first_partition + 2; ++p)
    CHECK(eg.number_of_subpartitions(p) == 2);

  REQUIRE(eg.regions().size() == 1);
  CHECK(eg.regions()[0].vertices.size() == 5);
  CHECK(eg.state() == job_status::created);
  for (const auto& ev : eg.vertices())
    CHECK(ev.current_execution.state() == execution_state::created);
}

TEST_CASE("with a parallel source at parallelism 2 the source chains into flat map") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  env.generate_sequence(1, 1000)
    .flat_map(
      [](const std::int64_t& n) { return examples::split_words("line " + std::to_string(n)); })
    .uid("flatMap-1")
    .filter([](const std::string& w) { return !w.empty(); })
    .uid("filter-1")
    .map([](const std::string& w) { return std::pair<std::string, int>(w, 1); })
    .uid("map-1")
    .key_by<0>()
    .sum<1>()
    .print();
  auto job = env.get_job_graph();
  REQUIRE(job.has_value());
  REQUIRE(job->vertices.size() == 2);
  CHECK(job->vertices[0].name == "aggregation -> Sink: Print to Std. Out");
  CHECK(job->vertices[1].name == "Source: Sequence Source -> Flat Map -> Filter -> Map");
  CHECK(job->vertices[1].parallelism == 2);
  CHECK(job->vertices[1].invokable == task_kind::source_stream_task);
  REQUIRE(job->edges.size() == 1);
  CHECK(job->edges[0].ship_strategy_name == "HASH");
}

TEST_CASE("a non-parallel source refuses a parallelism above 1 with Flink's message") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto words = env.from_elements(std::string("a"), std::string("b"));
  CHECK(words.transformation()->parallelism() == 1);
  CHECK_THROWS_WITH_AS(words.set_parallelism(2),
                       "The parallelism of non parallel operator must be 1.",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(env.socket_text_stream("localhost", 9999).set_parallelism(3),
                       "The parallelism of non parallel operator must be 1.",
                       std::invalid_argument);
  // The text file source reads in parallel (one split per subtask).
  CHECK_NOTHROW(env.read_text_file("/tmp/x").set_parallelism(2));
  CHECK_NOTHROW(words.set_parallelism(1));
  CHECK_NOTHROW(env.generate_sequence(0, 10).set_parallelism(4));
  CHECK_THROWS_AS(env.generate_sequence(0, 10).set_parallelism(0), std::invalid_argument);
}
