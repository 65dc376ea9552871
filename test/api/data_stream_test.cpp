// The DataStream API's operations and what they leave in the graph for the data plane.

#include "api/api.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::graph;

namespace {

stream_graph stream_of(const api::stream_execution_environment& env) {
  auto g = env.get_stream_graph();
  REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
  return std::move(*g);
}

template <class T>
struct vector_collector : api::collector<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

} // namespace

TEST_CASE("each partitioning call puts its partitioner on the edge") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto source = env.generate_sequence(0, 9);
  auto identity = [](const std::int64_t& x) { return x; };
  auto a = source.rebalance().map(identity);
  auto b = source.rescale().map(identity);
  auto c = source.broadcast().map(identity);
  auto d = source.shuffle().map(identity);
  auto e = source.forward().map(identity);
  auto f = source.global().map(identity);
  auto g = source.key_by([](const std::int64_t& x) { return x % 2; }).map(identity);
  for (auto* s : {&a, &b, &c, &d, &e, &f, &g})
    s->print();
  auto graph = stream_of(env);
  auto partitioner_into = [&](int target) {
    for (const auto& edge : graph.edges())
      if (edge.target_id == target)
        return edge.partitioner.kind;
    FAIL("no edge into " << target);
    return partitioner_kind::forward;
  };
  CHECK(partitioner_into(a.id()) == partitioner_kind::rebalance);
  CHECK(partitioner_into(b.id()) == partitioner_kind::rescale);
  CHECK(partitioner_into(c.id()) == partitioner_kind::broadcast);
  CHECK(partitioner_into(d.id()) == partitioner_kind::shuffle);
  CHECK(partitioner_into(e.id()) == partitioner_kind::forward);
  CHECK(partitioner_into(f.id()) == partitioner_kind::global);
  CHECK(partitioner_into(g.id()) == partitioner_kind::key_group);
  CHECK(graph.virtual_partition_nodes().size() == 7);

  auto job = env.get_job_graph();
  REQUIRE(job.has_value());
  std::vector<std::string> strategies;
  for (const auto& edge : job->edges)
    strategies.push_back(edge.ship_strategy_name);
  std::sort(strategies.begin(), strategies.end());
  // The forward edge chains, so it has no JobEdge.
  CHECK(
    strategies
    == std::vector<std::string>{"BROADCAST", "GLOBAL", "HASH", "REBALANCE", "RESCALE", "SHUFFLE"});
}

TEST_CASE("the partitioning call applied last wins") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  auto m = env.generate_sequence(0, 9)
             .partition({partitioner_kind::rebalance}, shuffle_mode::batch)
             .shuffle()
             .map([](const std::int64_t& x) { return x; });
  m.print();
  auto g = stream_of(env);
  CHECK(g.virtual_partition_nodes().size() == 2);
  const auto& edge = g.edge(g.node(m.id()).in_edges.at(0));
  CHECK(edge.source_id == 1);
  CHECK(edge.partitioner.kind == partitioner_kind::shuffle);
  CHECK(edge.shuffle_mode == shuffle_mode::batch);
}

TEST_CASE("forward between different parallelisms is refused when the graph is built") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  env.generate_sequence(0, 9)
    .forward()
    .map([](const std::int64_t& x) { return x; })
    .set_parallelism(3)
    .print();
  auto g = env.get_stream_graph();
  REQUIRE_FALSE(g.has_value());
  CHECK(
    g.error().message.starts_with("Forward partitioning does not allow change of parallelism."));
}

TEST_CASE("operators keep the user's lambdas, reachable by stream node id") {
  api::stream_execution_environment env;
  auto words = env.from_elements("To be, or not", "to be");
  static_assert(std::is_same_v<decltype(words), api::data_stream<std::string>>);
  auto split =
    words.flat_map<std::string>([](const std::string& line, api::collector<std::string>& out) {
      std::string word;
      for (char c : line + " ") {
        if (std::isalpha(static_cast<unsigned char>(c)))
          word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        else if (!word.empty())
          out.collect(std::exchange(word, {}));
      }
    });
  auto pairs = split.map([](const std::string& w) { return std::tuple<std::string, int>(w, 1); });
  auto counts = pairs.key_by<0>().sum<1>();
  auto lengths = split.map([](const std::string& w) { return static_cast<int>(w.size()); })
                   .filter([](const int& n) { return n > 2; });
  counts.print();
  lengths.write_as_text("/tmp/lengths");
  auto g = stream_of(env);

  auto* source = dynamic_cast<const api::collection_source_factory<std::string>*>(
    g.node(words.id()).factory.get());
  REQUIRE(source != nullptr);
  CHECK(source->elements == std::vector<std::string>{"To be, or not", "to be"});
  CHECK(source->kind() == "source.collection");

  auto* flat_map = dynamic_cast<const api::flat_map_factory<std::string, std::string>*>(
    g.node(split.id()).factory.get());
  REQUIRE(flat_map != nullptr);
  vector_collector<std::string> out;
  flat_map->fn("To be, or not", out);
  CHECK(out.values == std::vector<std::string>{"to", "be", "or", "not"});

  using pair = std::tuple<std::string, int>;
  auto* map =
    dynamic_cast<const api::map_factory<std::string, pair>*>(g.node(pairs.id()).factory.get());
  REQUIRE(map != nullptr);
  CHECK(map->fn("be") == pair("be", 1));

  auto* sum = dynamic_cast<const api::keyed_reduce_factory<pair, std::string>*>(
    g.node(counts.id()).factory.get());
  REQUIRE(sum != nullptr);
  CHECK(sum->kind() == "sum");
  CHECK(sum->fn(pair("be", 2), pair("be", 1)) == pair("be", 3));
  CHECK(sum->key(pair("or", 1)) == "or");

  auto* filter = dynamic_cast<const api::filter_factory<int>*>(g.node(lengths.id()).factory.get());
  REQUIRE(filter != nullptr);
  CHECK(filter->fn(3));
  CHECK_FALSE(filter->fn(2));

  // The key selector rides on the HASH edge.
  for (const auto& edge : g.edges())
    if (edge.partitioner.kind == partitioner_kind::key_group) {
      auto* key =
        dynamic_cast<const api::typed_key_selector<pair, std::string>*>(edge.partitioner.key.get());
      REQUIRE(key != nullptr);
      CHECK(key->fn(pair("not", 1)) == "not");
    }

  std::vector<std::string> names;
  for (const auto& [id, node] : g.nodes())
    names.push_back(node.operator_name);
  CHECK(names
        == std::vector<std::string>{"Source: Collection Source", "Flat Map", "Map", "aggregation",
                                    "Map", "Filter", "Sink: Print to Std. Out", "Sink: Unnamed"});
}

TEST_CASE("name, uid, buffer timeout and max parallelism reach the stream node") {
  api::stream_execution_environment env;
  auto m = env.socket_text_stream("localhost", 9000)
             .map([](const std::string& s) { return s.size(); })
             .name("Length")
             .uid("length-1")
             .set_buffer_timeout(0)
             .set_max_parallelism(64)
             .set_parallelism(4);
  auto sink = m.print().name("Out").set_parallelism(4).disable_chaining();
  auto g = stream_of(env);
  const auto& node = g.node(m.id());
  CHECK(node.operator_name == "Length");
  CHECK(node.uid == std::optional<std::string>("length-1"));
  CHECK(node.buffer_timeout == 0);
  CHECK(node.max_parallelism == 64);
  CHECK(node.parallelism == 4);
  CHECK(g.node(sink.id()).operator_name == "Sink: Out");
  CHECK(g.node(sink.id()).chaining_strategy == chaining_strategy::never);
  CHECK(g.node(1).operator_name == "Source: Socket Stream");
  CHECK(g.node(1).parallelism == 1);
  CHECK_THROWS_AS(m.set_max_parallelism(0), std::invalid_argument);
  CHECK_THROWS_AS(env.generate_sequence(5, 1), std::invalid_argument);
}
