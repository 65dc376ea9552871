// StreamGraph rules of §2.2 checked on graphs built by hand.

#include "graph_test_util.hpp"

#include "runtime/graph/job_graph_generator.hpp"
#include "runtime/graph/stream_graph_generator.hpp"
#include "runtime/graph/stream_graph_hasher.hpp"

using namespace flint;
using namespace flint::graph;
using flint::test::value_of;

namespace {

stream_node make_node(int id, std::string name, int parallelism,
                      task_kind kind = task_kind::one_input_stream_task) {
  stream_node node;
  node.id = id;
  node.operator_name = std::move(name);
  node.parallelism = parallelism;
  node.task_kind = kind;
  node.chaining_strategy =
    kind == task_kind::source_stream_task ? chaining_strategy::head : chaining_strategy::always;
  return node;
}

} // namespace

TEST_CASE("an edge without a partitioner is FORWARD for equal parallelisms, else REBALANCE") {
  stream_graph g;
  REQUIRE(g.add_node(make_node(1, "Source: s", 1, task_kind::source_stream_task)).has_value());
  REQUIRE(g.add_node(make_node(2, "a", 2)).has_value());
  REQUIRE(g.add_node(make_node(3, "b", 2)).has_value());
  REQUIRE(g.add_edge(1, 2, 0).has_value());
  REQUIRE(g.add_edge(2, 3, 0).has_value());
  CHECK(g.edges()[0].partitioner.kind == partitioner_kind::rebalance);
  CHECK(g.edges()[1].partitioner.kind == partitioner_kind::forward);
  CHECK(g.node(2).in_edges == std::vector<std::size_t>{0});
  CHECK(g.node(2).out_edges == std::vector<std::size_t>{1});
  CHECK(g.edges()[1].edge_id() == "2_3_0_FORWARD");
  CHECK(g.sources() == std::set<int>{1});
}

TEST_CASE("an explicit FORWARD between different parallelisms is refused") {
  stream_graph g;
  REQUIRE(g.add_node(make_node(1, "Source: s", 1, task_kind::source_stream_task)).has_value());
  REQUIRE(g.add_node(make_node(2, "a", 2)).has_value());
  REQUIRE(g.add_virtual_partition_node(1, 10, {partitioner_kind::forward}, shuffle_mode::undefined)
            .has_value());
  auto refused = g.add_edge(10, 2, 0);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.starts_with(
    "Forward partitioning does not allow change of parallelism."));
  CHECK(g.edges().empty());
  CHECK_FALSE(g.add_edge(1, 99, 0).has_value());
  CHECK_FALSE(g.add_node(make_node(2, "again", 1)).has_value());
}

TEST_CASE("a virtual partition node resolves to its original node with its partitioner") {
  stream_graph g;
  REQUIRE(g.add_node(make_node(1, "Source: s", 2, task_kind::source_stream_task)).has_value());
  REQUIRE(g.add_node(make_node(2, "a", 2)).has_value());
  REQUIRE(g.add_virtual_partition_node(1, 10, {partitioner_kind::broadcast}, shuffle_mode::batch)
            .has_value());
  REQUIRE(g.add_edge(10, 2, 0).has_value());
  REQUIRE(g.edges().size() == 1);
  CHECK(g.edges()[0].source_id == 1);
  CHECK(g.edges()[0].partitioner.kind == partitioner_kind::broadcast);
  CHECK(g.edges()[0].shuffle_mode == shuffle_mode::batch);
}

TEST_CASE("transformation ids come from the environment's counter and virtual ids follow them") {
  api::stream_execution_environment env(test::parallelism(2));
  auto src = env.generate_sequence(0, 9);
  auto keyed = src.key_by([](const std::int64_t& x) { return x % 3; });
  auto reduced = keyed.reduce([](const std::int64_t& a, const std::int64_t& b) { return a + b; });
  auto sink = reduced.print();
  CHECK(src.id() == 1);
  CHECK(keyed.id() == 2);
  CHECK(reduced.id() == 3);
  CHECK(sink.id() == 4);
  // The partition transformation is not in the environment's list (§2.1).
  CHECK(env.transformations().size() == 3);
  auto g = value_of(env.get_stream_graph());
  CHECK(g.nodes().size() == 3);
  REQUIRE(g.virtual_partition_nodes().size() == 1);
  CHECK(g.virtual_partition_nodes().begin()->first == 5);
  CHECK(g.node(3).operator_name == "Keyed Reduce");
  CHECK(g.node(3).chaining_strategy == chaining_strategy::head);
  CHECK(g.node(1).chaining_strategy == chaining_strategy::head);
  CHECK(g.node(4).chaining_strategy == chaining_strategy::always);
}

TEST_CASE("slot sharing groups are inherited from inputs and default otherwise") {
  api::stream_execution_environment env(test::parallelism(2));
  auto a = env.generate_sequence(0, 9).slot_sharing_group("g1");
  auto b = env.generate_sequence(0, 9).slot_sharing_group("g2");
  auto same = a.map([](const std::int64_t& x) { return x; });
  auto mixed = a.union_with(b).map([](const std::int64_t& x) { return x; });
  same.print();
  mixed.print();
  auto g = value_of(env.get_stream_graph());
  CHECK(g.node(same.id()).slot_sharing_group == "g1");
  CHECK(g.node(mixed.id()).slot_sharing_group == "default");
}

TEST_CASE("co-location groups gather vertices of one slot sharing group") {
  api::stream_execution_environment env(test::parallelism(2));
  env.generate_sequence(0, 9)
    .co_location_group("together")
    .rebalance()
    .map([](const std::int64_t& x) { return x; })
    .co_location_group("together")
    .print();
  auto job = value_of(env.get_job_graph());
  REQUIRE(job.co_location_groups.size() == 1);
  CHECK(job.co_location_groups[0].key == "together");
  CHECK(job.co_location_groups[0].vertices.size() == 2);
  for (const auto& v : job.vertices)
    CHECK(v.co_location_group == std::optional<std::size_t>(0));

  api::stream_execution_environment split(test::parallelism(2));
  split.generate_sequence(0, 9)
    .co_location_group("together")
    .rebalance()
    .map([](const std::int64_t& x) { return x; })
    .slot_sharing_group("elsewhere")
    .co_location_group("together")
    .print();
  auto refused = split.get_job_graph();
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "Cannot co-locate operators from different slot sharing groups");
}

TEST_CASE("checkpointing triggers at input vertices and is acknowledged by all") {
  api::stream_execution_environment env(test::parallelism(2));
  env.enable_checkpointing(5); // below Flink's 10 ms minimum: off
  auto other = env.generate_sequence(0, 9);
  env.generate_sequence(0, 9)
    .union_with(other)
    .map([](const std::int64_t& x) { return x; })
    .print();
  auto job = value_of(env.get_job_graph());
  CHECK(job.checkpointing.interval == -1);
  REQUIRE(job.vertices.size() == 3);
  CHECK(job.checkpointing.trigger_vertices == std::vector<std::size_t>{1, 2});
  CHECK(job.checkpointing.ack_vertices == std::vector<std::size_t>{0, 1, 2});
  env.enable_checkpointing(500);
  CHECK(value_of(env.get_job_graph()).checkpointing.interval == 500);
}

namespace {

std::int64_t times_two(const std::int64_t& x) {
  return x * 2;
}

/// Operator name → id hash of `env`'s stream graph.
std::map<std::string, node_hash> ids_by_name(api::stream_execution_environment& env) {
  auto g = value_of(env.get_stream_graph());
  auto hashes = value_of(hash_stream_graph(g));
  std::map<std::string, node_hash> out;
  for (const auto& [id, hash] : hashes)
    out.emplace(g.node(id).operator_name, hash);
  return out;
}

/// src -> a -> [inserted ->] key_by -> reduce -> sink, and a branch src -> b -> sink.
std::map<std::string, node_hash> pipeline_ids(bool with_inserted, bool inserted_follows) {
  api::stream_execution_environment env(test::parallelism(2));
  auto src = env.generate_sequence(0, 99);
  auto a = src.map(times_two).name("a");
  if (with_inserted) {
    auto inserted = a.map(times_two).name("inserted");
    inserted.transformation()->set_id_follows_consumer(inserted_follows);
    a = inserted;
  }
  a.key_by([](const std::int64_t& x) { return x % 7; })
    .reduce([](const std::int64_t& x, const std::int64_t& y) { return x + y; })
    .name("reduce")
    .print();
  src.map(times_two).name("b").print();
  return ids_by_name(env);
}

} // namespace

TEST_CASE("an operator whose id follows its consumer leaves every other operator's id as written") {
  auto written = pipeline_ids(false, false);
  auto with_follower = pipeline_ids(true, true);
  auto with_plain = pipeline_ids(true, false);
  REQUIRE(written.size() == 5);
  REQUIRE(with_follower.size() == 6);
  for (const auto& [name, hash] : written) {
    CAPTURE(name);
    CHECK(with_follower.at(name) == hash);
  }
  // Its own id is its consumer's, salted: stable, and unlike any other.
  CHECK(with_follower.at("inserted") != with_follower.at("reduce"));
  CHECK(with_follower.at("inserted") == pipeline_ids(true, true).at("inserted"));
  for (const auto& [name, hash] : written)
    if (name != "inserted")
      CHECK(hash != with_follower.at("inserted"));
  // An ordinary operator in the same place moves the ids after it (Flink's hashing).
  CHECK(with_plain.at("reduce") != written.at("reduce"));
}
