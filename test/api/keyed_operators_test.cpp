// The keyed operators the API builds with the key's field and the fold known to the compiler
// (key_by<N> with sum and reduce), and the writer of a key_by<N> edge that hashes the field in
// place: the same records, states and channels as the operators that call through pointers.

#include "api/api.hpp"
#include "runtime/state/keyed_state_files.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

using namespace flint;

namespace {

using pair = std::tuple<std::string, std::int64_t>;
using triple = std::tuple<std::int64_t, std::string, std::int64_t>;

template <class T>
struct vector_output : streaming::output<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

struct recording_writer : streaming::record_writer {
  std::size_t channels;
  std::vector<std::size_t> picked;
  explicit recording_writer(std::size_t n) : channels(n) {}
  using streaming::record_writer::emit;
  void emit(std::span<const char>, std::size_t channel, bool) override { picked.push_back(channel); }
  std::size_t num_channels() const override { return channels; }
};

graph::stream_graph stream_of(const api::stream_execution_environment& env) {
  auto g = env.get_stream_graph();
  REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
  return std::move(*g);
}

/// Subtask 0 of 1: every key group is its own.
streaming::operator_context whole_range() {
  streaming::operator_context ctx;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = streaming::key_group_range_for_operator(128, 1, 0);
  return ctx;
}

/// The factory of the node `id`, as a keyed reduce factory of T keyed by K.
template <class T, class K>
const api::keyed_reduce_factory<T, K>& reduce_factory(const graph::stream_graph& g, int id) {
  auto* f = dynamic_cast<const api::keyed_reduce_factory<T, K>*>(g.node(id).factory.get());
  REQUIRE(f != nullptr);
  return *f;
}

} // namespace

TEST_CASE("key_by<N>().sum<M>() builds an operator with the key's field and the sum compiled in") {
  api::stream_execution_environment env;
  auto counts = env.from_collection(std::vector<pair>{{"a", 1}, {"b", 2}}).key_by<0>().sum<1>();
  auto g = stream_of(env);
  const auto& factory = reduce_factory<pair, std::string>(g, counts.id());
  CHECK(factory.kind() == "sum");
  CHECK(dynamic_cast<const api::keyed_reduce_factory_of<pair, std::string,
                                                        streaming::tuple_key_field<0>,
                                                        streaming::tuple_field_sum<1>>*>(&factory)
        != nullptr);
  // What tests and tools inspect stays set.
  CHECK(factory.fn(pair("be", 2), pair("be", 1)) == pair("be", 3));
  CHECK(factory.key(pair("or", 1)) == "or");

  // The operator the factory creates is of that type; one built the same way over a recording
  // output emits every running total.
  using op_type = streaming::keyed_reduce_operator<pair, std::string, streaming::tuple_key_field<0>,
                                                   streaming::tuple_field_sum<1>>;
  auto out = std::make_unique<vector_output<pair>>();
  auto* seen = out.get();
  op_type op(nullptr, nullptr, {factory.key, factory.key_field}, whole_range(), std::move(out));
  for (auto [w, n] : std::vector<pair>{{"to", 1}, {"be", 1}, {"to", 2}, {"be", 5}, {"to", 1}})
    op.process_element(pair(w, n));
  CHECK(seen->values
        == std::vector<pair>{{"to", 1}, {"be", 1}, {"to", 3}, {"be", 6}, {"to", 4}});
  CHECK(op.num_keys() == 2);
  auto ctx = whole_range();
  CHECK(dynamic_cast<op_type*>(factory.create_operator(ctx).get()) != nullptr);
}

TEST_CASE("a key in another field, a key selector and a reduce get operators of their own") {
  api::stream_execution_environment env;
  auto source = env.from_collection(std::vector<triple>{{1, "a", 1}});
  auto by_field = source.key_by<1>().sum<2>();
  auto by_lambda = source.key_by([](const triple& t) { return std::get<1>(t); }).sum<2>();
  auto reduced = source.key_by<1>().reduce([](const triple& acc, const triple& next) {
    return triple(std::max(std::get<0>(acc), std::get<0>(next)), std::get<1>(acc),
                  std::get<2>(acc) + std::get<2>(next));
  });
  auto g = stream_of(env);

  const auto& field_factory = reduce_factory<triple, std::string>(g, by_field.id());
  CHECK(dynamic_cast<const api::keyed_reduce_factory_of<triple, std::string,
                                                        streaming::tuple_key_field<1>,
                                                        streaming::tuple_field_sum<2>>*>(
          &field_factory)
        != nullptr);
  const auto& lambda_factory = reduce_factory<triple, std::string>(g, by_lambda.id());
  CHECK(dynamic_cast<const api::keyed_reduce_factory_of<triple, std::string, void,
                                                        streaming::tuple_field_sum<2>>*>(
          &lambda_factory)
        != nullptr);
  const auto& reduce = reduce_factory<triple, std::string>(g, reduced.id());
  CHECK(reduce.kind() == "reduce");
  const bool keyed_in_place = reduce.key_field != nullptr;
  CHECK_FALSE(keyed_in_place); // a reduce may rewrite the record: state keeps its key

  // Each creates an operator that folds per key.
  std::vector<triple> input{{3, "x", 1}, {5, "y", 1}, {1, "x", 10}, {9, "x", 100}, {2, "y", 1}};
  auto run = [&](const api::keyed_reduce_factory<triple, std::string>& f) {
    auto ctx = whole_range();
    auto op = f.create_operator(ctx);
    auto* typed = dynamic_cast<streaming::one_input_operator<triple>*>(op.get());
    REQUIRE(typed != nullptr);
    // Created without a chained target, the operator discards its output; its state shows the
    // fold.
    for (const auto& r : input)
      typed->process_element(r);
    auto snapshot = op->snapshot_state(1);
    std::map<std::string, triple> last;
    for (const auto& bytes : snapshot.key_groups) {
      streaming::byte_reader in(bytes);
      while (!in.at_end()) {
        if (f.key_field) {
          auto value = streaming::type_serializer<triple>::read(in);
          last[std::get<1>(value)] = value;
        } else {
          auto key = streaming::type_serializer<std::string>::read(in);
          last[key] = streaming::type_serializer<triple>::read(in);
        }
      }
    }
    return last;
  };
  CHECK(run(field_factory)
        == std::map<std::string, triple>{{"x", {3, "x", 111}}, {"y", {5, "y", 2}}});
  CHECK(run(lambda_factory)
        == std::map<std::string, triple>{{"x", {3, "x", 111}}, {"y", {5, "y", 2}}});
  CHECK(run(reduce) == std::map<std::string, triple>{{"x", {9, "x", 111}}, {"y", {5, "y", 2}}});
}

TEST_CASE("a keyed reduce with its key and fold compiled in restores what it snapshotted") {
  using op_type =
    streaming::keyed_reduce_operator<pair, std::string, streaming::tuple_key_field<0>,
                                     streaming::replacing_fold<pair (*)(const pair&, const pair&)>>;
  pair (*add)(const pair&, const pair&) = [](const pair& a, const pair& b) {
    return pair(std::get<0>(a), std::get<1>(a) + std::get<1>(b));
  };
  auto key = [](const pair& p) { return std::get<0>(p); };
  // State holds key and value (no field pointer: a reduce), read by the compiled-in field.
  auto first = std::make_unique<vector_output<pair>>();
  op_type before(nullptr, nullptr, {key, nullptr}, whole_range(), std::move(first), {add});
  for (const auto& w : {"a", "b", "a", "c", "a"})
    before.process_element(pair(w, 1));
  auto snapshot = before.snapshot_state(1);

  state::operator_subtask_state s;
  auto handle = state::write_keyed_state("", snapshot.first_key_group, snapshot.key_groups);
  REQUIRE(handle.has_value());
  s.keyed.push_back(*handle);
  auto out = std::make_unique<vector_output<pair>>();
  auto* seen = out.get();
  op_type after(nullptr, nullptr, {key, nullptr}, whole_range(), std::move(out), {add});
  after.initialize_state(state::operator_state_restore(std::move(s), false, true));
  CHECK(after.num_keys() == 3);
  for (const auto& w : {"a", "c", "d"})
    after.process_element(pair(w, 1));
  CHECK(seen->values == std::vector<pair>{{"a", 4}, {"c", 2}, {"d", 1}});
}

TEST_CASE("a key_by<N> edge's writer hashes the field in place and picks Flink's channels") {
  api::stream_execution_environment env;
  auto keyed = env.from_collection(std::vector<pair>{{"a", 1}}).key_by<0>();
  const auto& selector = *keyed.key();
  std::vector<std::string> words;
  for (int i = 0; i < 200; ++i)
    words.push_back("w" + std::to_string(i * 7919));

  recording_writer generic_writer(3), field_writer(3);
  streaming::network_output generic_target{&generic_writer,
                                           graph::partitioner_kind::key_group, &selector, 128};
  streaming::network_output field_target{&field_writer, graph::partitioner_kind::key_group,
                                         &selector, 128};
  streaming::record_writer_output<pair> generic(generic_target, 0);
  auto field = selector.make_writer_output(field_target, 0);
  // Not the writer that calls key_hash_of through the selector.
  CHECK(dynamic_cast<streaming::record_writer_output<pair>*>(field.get()) == nullptr);
  std::vector<std::size_t> expected;
  for (const auto& w : words) {
    generic.collect_ref(pair(w, 1));
    field->collect_ref(pair(w, 1));
    expected.push_back(static_cast<std::size_t>(streaming::operator_index_for_key_group(
      128, 3, streaming::assign_to_key_group(streaming::key_hash(w), 128))));
  }
  CHECK(generic_writer.picked == expected);
  CHECK(field_writer.picked == expected);

  // make_output gives a HASH edge the selector's writer.
  streaming::operator_context ctx;
  ctx.network_outputs.push_back(field_target);
  auto made = streaming::make_output<pair>(ctx);
  CHECK(dynamic_cast<streaming::record_writer_output<pair>*>(made.get()) == nullptr);
  field_writer.picked.clear();
  made->collect_ref(pair(words[0], 1));
  CHECK(field_writer.picked == std::vector<std::size_t>{expected[0]});
}
