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

namespace {

/// Feeds `input` to two keyed sums of the same type, one as objects (process_element), one as
/// their wire bytes (process_serialized): both must emit the same totals and snapshot the same
/// state. Returns what the second emitted.
template <class T, std::size_t KeyIndex, std::size_t SumIndex>
std::vector<T> same_sums_from_bytes(const std::vector<T>& input) {
  using op_type =
    streaming::keyed_reduce_operator<T, std::string, streaming::tuple_key_field<KeyIndex>,
                                     streaming::tuple_field_sum<SumIndex>>;
  static_assert(streaming::detail::in_place_sum<T, streaming::tuple_key_field<KeyIndex>,
                                                streaming::tuple_field_sum<SumIndex>>::value);
  auto field = [](const T& v) -> const std::string& { return std::get<KeyIndex>(v); };
  auto key = [](const T& v) { return std::get<KeyIndex>(v); };
  auto objects_out = std::make_unique<vector_output<T>>();
  auto bytes_out = std::make_unique<vector_output<T>>();
  auto* from_objects = objects_out.get();
  auto* from_bytes = bytes_out.get();
  op_type by_object(nullptr, nullptr, {key, +field}, whole_range(), std::move(objects_out));
  op_type by_bytes(nullptr, nullptr, {key, +field}, whole_range(), std::move(bytes_out));
  for (const auto& r : input) {
    by_object.process_element(r);
    std::vector<char> bytes;
    streaming::type_serializer<T>::write(r, bytes);
    by_bytes.process_serialized(bytes);
  }
  CHECK(from_bytes->values == from_objects->values);
  CHECK(by_bytes.num_keys() == by_object.num_keys());
  CHECK(by_bytes.snapshot_state(1).key_groups == by_object.snapshot_state(1).key_groups);
  // Every record of a key seen before was summed from its bytes; none from objects.
  CHECK(by_bytes.num_summed_in_place() == input.size() - by_bytes.num_keys());
  CHECK(by_object.num_summed_in_place() == 0);
  return from_bytes->values;
}

/// Feeds the wire bytes of `input` to a keyed sum whose layout is not read in place: the same
/// totals as from the objects, and no record summed in place.
template <class T, std::size_t KeyIndex, std::size_t SumIndex>
void sums_from_bytes_fall_back(const std::vector<T>& input) {
  using op_type =
    streaming::keyed_reduce_operator<T, std::string, streaming::tuple_key_field<KeyIndex>,
                                     streaming::tuple_field_sum<SumIndex>>;
  auto field = [](const T& v) -> const std::string& { return std::get<KeyIndex>(v); };
  auto key = [](const T& v) { return std::get<KeyIndex>(v); };
  auto objects_out = std::make_unique<vector_output<T>>();
  auto bytes_out = std::make_unique<vector_output<T>>();
  auto* from_objects = objects_out.get();
  auto* from_bytes = bytes_out.get();
  op_type by_object(nullptr, nullptr, {key, +field}, whole_range(), std::move(objects_out));
  op_type by_bytes(nullptr, nullptr, {key, +field}, whole_range(), std::move(bytes_out));
  for (const auto& r : input) {
    by_object.process_element(r);
    std::vector<char> bytes;
    streaming::type_serializer<T>::write(r, bytes);
    by_bytes.process_serialized(bytes);
  }
  CHECK(from_bytes->values == from_objects->values);
  CHECK(by_bytes.num_keys() < input.size());
  CHECK(by_bytes.num_summed_in_place() == 0);
}

} // namespace

TEST_CASE("a keyed sum reads records in place from their bytes with the same totals and state") {
  using streaming::detail::in_place_sum;
  using streaming::tuple_field_sum;
  using streaming::tuple_key_field;
  // Only a string key among numbers is read in place.
  CHECK(in_place_sum<pair, tuple_key_field<0>, tuple_field_sum<1>>::value);
  CHECK_FALSE(in_place_sum<std::tuple<std::string, bool, std::int64_t>, tuple_key_field<0>,
                           tuple_field_sum<2>>::value);
  CHECK_FALSE(in_place_sum<std::tuple<std::string, std::string, std::int64_t>,
                           tuple_key_field<0>, tuple_field_sum<2>>::value);
  CHECK_FALSE(in_place_sum<std::tuple<std::int64_t, std::int64_t>, tuple_key_field<0>,
                           tuple_field_sum<1>>::value);

  // Keys of every length the compare takes a different way (0, 1-3, 4-7, 8-16, longer), and
  // "Aa"/"BB", which share a Java hash.
  std::vector<std::string> keys{"",       "a",         "Aa",          "BB",   "abcd",
                                "abcdefg", "abcdefgh", "abcdefghijklmnop", "abcdefghijklmnopq",
                                std::string(40, 'z')};
  std::vector<pair> pairs;
  std::vector<triple> triples;
  using sum_first = std::tuple<std::int32_t, std::string, std::int16_t>;
  std::vector<sum_first> sum_firsts;
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < keys.size(); ++i) {
      pairs.emplace_back(keys[i], static_cast<std::int64_t>(i + 1) * (round + 1));
      triples.emplace_back(round, keys[i], static_cast<std::int64_t>(i) - 3);
      sum_firsts.emplace_back(static_cast<std::int32_t>(i * 10 + 1), keys[i],
                              static_cast<std::int16_t>(round));
    }
  auto totals = same_sums_from_bytes<pair, 0, 1>(pairs);
  REQUIRE(totals.size() == pairs.size());
  CHECK(totals.back() == pair(keys.back(), 10 + 20 + 30));
  CHECK(totals[keys.size() + 2] == pair("Aa", 3 + 6)); // not BB's
  same_sums_from_bytes<triple, 1, 2>(triples);
  auto firsts = same_sums_from_bytes<sum_first, 1, 0>(sum_firsts);
  // The key's own record is kept, the sum field added up; the other field is the first record's.
  CHECK(firsts.back() == sum_first(273, keys.back(), 0));

  // A bool or a second string among the fields: the record goes through its object.
  std::vector<std::tuple<std::string, bool, std::int64_t>> with_bool;
  std::vector<std::tuple<std::string, std::string, std::int64_t>> two_strings;
  for (int round = 0; round < 3; ++round)
    for (const auto& k : keys) {
      with_bool.emplace_back(k, round % 2 == 0, round + 1);
      two_strings.emplace_back(k, k + "!", round + 1);
    }
  sums_from_bytes_fall_back<std::tuple<std::string, bool, std::int64_t>, 0, 2>(with_bool);
  sums_from_bytes_fall_back<std::tuple<std::string, std::string, std::int64_t>, 0, 2>(two_strings);
}

TEST_CASE("a keyed sum reading in place refuses short records and keys of another subtask") {
  using op_type = streaming::keyed_reduce_operator<pair, std::string, streaming::tuple_key_field<0>,
                                                   streaming::tuple_field_sum<1>>;
  auto field = [](const pair& v) -> const std::string& { return std::get<0>(v); };
  auto key = [](const pair& v) { return std::get<0>(v); };
  op_type op(nullptr, nullptr, {key, +field}, whole_range(), std::make_unique<vector_output<pair>>());
  std::vector<char> bytes;
  streaming::type_serializer<pair>::write(pair("word", 1), bytes);
  op.process_serialized(bytes);
  op.process_serialized(bytes);
  CHECK(op.num_summed_in_place() == 1);
  // Records cut short get the deserializer's own errors: the count, the string, the length.
  auto cut = bytes;
  cut.resize(bytes.size() - 1);
  CHECK_THROWS_WITH_AS(op.process_serialized(cut), doctest::Contains("record is shorter"),
                       std::runtime_error);
  cut.resize(4 + 2);
  CHECK_THROWS_WITH_AS(op.process_serialized(cut), doctest::Contains("record claims a string of 4"),
                       std::runtime_error);
  cut.resize(3);
  CHECK_THROWS_WITH_AS(op.process_serialized(cut), doctest::Contains("record is shorter"),
                       std::runtime_error);
  CHECK(op.num_keys() == 1);
  CHECK(op.num_summed_in_place() == 1);

  // Subtask 1 of 2 holds the upper half of the key groups; a new key of the lower half is refused.
  auto ctx = whole_range();
  ctx.key_groups = streaming::key_group_range_for_operator(128, 2, 1);
  op_type half(nullptr, nullptr, {key, +field}, ctx, std::make_unique<vector_output<pair>>());
  std::string foreign;
  for (int i = 0; foreign.empty(); ++i) {
    auto w = "k" + std::to_string(i);
    if (!ctx.key_groups.contains(
          streaming::assign_to_key_group(streaming::key_hash(w), 128)))
      foreign = w;
  }
  bytes.clear();
  streaming::type_serializer<pair>::write(pair(foreign, 1), bytes);
  CHECK_THROWS_AS(half.process_serialized(bytes), std::logic_error);
  CHECK(half.num_keys() == 0);
}
