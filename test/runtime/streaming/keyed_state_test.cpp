// The keyed state table of keyed operators, and the keyed reduce over it: every key found again
// after the table grew, keys whose Java hashes collide kept apart, entries listed per key group,
// and a record of a key group outside the subtask's range refused.

#include "runtime/streaming/key_groups.hpp"
#include "runtime/streaming/keyed_state.hpp"
#include "runtime/streaming/operators.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace flint::streaming;

namespace {

using record = std::tuple<std::string, std::int64_t>;

const std::string& word_of(const record& r) {
  return std::get<0>(r);
}

record* find(keyed_value_table<record>& table, const std::string& word) {
  return table.find(key_hash(word), [&](const record& r) { return same_key(word_of(r), word); });
}

template <class T>
struct vector_output : output<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

} // namespace

TEST_CASE("same_key agrees with string equality at every length") {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (std::size_t i = 0; i < n; ++i)
      a[i] = static_cast<char>('a' + (i * 7) % 26);
    CHECK(same_key(a, a));
    CHECK(same_key(a, std::string(a)));
    for (std::size_t i = 0; i < n; ++i) {
      auto b = a;
      b[i] = '#';
      CAPTURE(n);
      CAPTURE(i);
      CHECK_FALSE(same_key(a, b));
    }
    CHECK_FALSE(same_key(a, a + "y"));
  }
  CHECK(same_key(42, 42));
  CHECK_FALSE(same_key(42, 43));
}

TEST_CASE(
  "the keyed state table finds every key again after growing and lists keys per key group") {
  keyed_value_table<record> table;
  std::map<std::string, int> groups;
  for (int i = 0; i < 5000; ++i) {
    auto word = "w" + std::to_string(i * 7919);
    auto hash = key_hash(word);
    int group = assign_to_key_group(hash, 128);
    REQUIRE(find(table, word) == nullptr);
    auto& stored = table.insert(hash, group, record{word, i});
    CHECK(word_of(stored) == word);
    groups[word] = group;
  }
  CHECK(table.size() == 5000);
  for (const auto& [word, group] : groups) {
    auto* r = find(table, word);
    REQUIRE(r != nullptr);
    CHECK(word_of(*r) == word);
  }
  CHECK(find(table, "absent") == nullptr);
  std::size_t listed = 0;
  for (int g = 0; g < 128; ++g)
    table.for_each_in_key_group(g, [&](const record& r) {
      CHECK(groups.at(word_of(r)) == g);
      ++listed;
    });
  CHECK(listed == 5000);
  table.clear();
  CHECK(table.size() == 0);
  CHECK(find(table, "w0") == nullptr);
}

TEST_CASE("keys with the same Java hash stay apart in the keyed state table") {
  // "Aa" and "BB" (and their concatenations) share Java's hashCode.
  std::vector<std::string> words = {"Aa", "BB", "AaAa", "AaBB", "BBAa", "BBBB"};
  REQUIRE(key_hash(words[0]) == key_hash(words[1]));
  REQUIRE(key_hash(words[2]) == key_hash(words[5]));
  keyed_value_table<record> table;
  for (std::size_t i = 0; i < words.size(); ++i)
    table.insert(key_hash(words[i]), 0, record{words[i], static_cast<std::int64_t>(i)});
  for (std::size_t i = 0; i < words.size(); ++i) {
    auto* r = find(table, words[i]);
    REQUIRE(r != nullptr);
    CHECK(std::get<1>(*r) == static_cast<std::int64_t>(i));
  }
}

TEST_CASE("a keyed sum emits every running total and refuses a key of another subtask") {
  operator_context ctx;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = key_group_range_for_operator(128, 2, 0);
  auto out = std::make_unique<vector_output<record>>();
  auto* seen = out.get();
  key_extractor<record, std::string> key;
  key.field = &word_of;
  keyed_reduce_operator<record, std::string> sum(
    nullptr, [](record& acc, const record& next) { std::get<1>(acc) += std::get<1>(next); }, key,
    ctx, std::move(out));
  // Words of this subtask's key groups, and one of the other subtask's.
  std::vector<std::string> mine;
  std::string other;
  for (int i = 0; mine.size() < 3 || other.empty(); ++i) {
    auto word = "k" + std::to_string(i);
    bool here = ctx.key_groups.contains(assign_to_key_group(key_hash(word), 128));
    if (here && mine.size() < 3)
      mine.push_back(word);
    else if (!here && other.empty())
      other = word;
  }
  for (int round = 1; round <= 3; ++round)
    for (const auto& word : mine)
      sum.process_element(record{word, round});
  REQUIRE(seen->values.size() == 9);
  CHECK(seen->values[0] == record{mine[0], 1});
  CHECK(seen->values[3] == record{mine[0], 3});
  CHECK(seen->values[8] == record{mine[2], 6});
  CHECK(sum.num_keys() == 3);
  CHECK_THROWS_WITH_AS(sum.process_element(record{other, 1}),
                       doctest::Contains("the record reached the wrong subtask"), std::logic_error);
  CHECK(sum.num_keys() == 3);
}
