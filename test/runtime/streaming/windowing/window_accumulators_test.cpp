// window_accumulators: typed accumulators found by the backend key, flushed into the backend in
// its own format (so a snapshot of the backend after a flush holds every window) and emptied.

#include "runtime/state/heap_keyed_state_backend.hpp"
#include "runtime/streaming/windowing/window_accumulators.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>

using namespace flint;
using namespace flint::streaming;

namespace {

void encode(const std::int64_t& v, std::string& bytes) {
  char b[8];
  std::memcpy(b, &v, 8);
  bytes.append(b, 8);
}

std::int64_t decoded(const std::string& bytes) {
  REQUIRE(bytes.size() == 8);
  std::int64_t v = 0;
  std::memcpy(&v, bytes.data(), 8);
  return v;
}

} // namespace

TEST_CASE("window accumulators are found by key, updated in place and erased") {
  window_accumulators<std::int64_t> table;
  CHECK(table.find("k1w1") == nullptr);
  table.insert("k1w1", 3, 1, false);
  table.insert("k1w2", 3, 10, true);
  REQUIRE(table.find("k1w1") != nullptr);
  table.find("k1w1")->value += 5;
  CHECK(table.find("k1w1")->value == 6);
  CHECK(table.find("k1w1")->key_group == 3);
  CHECK(table.size() == 2);

  bool in_backend = false;
  CHECK(table.erase("k1w2", in_backend));
  CHECK(in_backend);
  CHECK(table.erase("k1w1", in_backend));
  CHECK_FALSE(in_backend);
  CHECK_FALSE(table.erase("k1w1", in_backend));
  CHECK(table.size() == 0);
}

TEST_CASE("a flush puts every accumulator into its key group of the backend and empties the table") {
  state::heap_keyed_state_backend backend(state::key_group_range{0, 9});
  auto id = backend.register_state("window-contents");
  backend.put(id, 4, "old", "x");
  window_accumulators<std::int64_t> table;
  table.insert("a", 2, 7, false);
  table.insert("b", 4, 8, false);
  table.insert("old", 4, 9, true);
  table.flush(backend, id, encode);
  CHECK(table.size() == 0);

  std::string v;
  REQUIRE(backend.get(id, 2, "a", v));
  CHECK(decoded(v) == 7);
  REQUIRE(backend.get(id, 4, "b", v));
  CHECK(decoded(v) == 8);
  REQUIRE(backend.get(id, 4, "old", v));
  CHECK(decoded(v) == 9);
  CHECK_FALSE(backend.get(id, 2, "b", v));

  // Restored into a backend of other key groups: only its own entries.
  auto upload = backend.snapshot(1);
  auto handles = upload(state::snapshot_target{});
  REQUIRE(handles.has_value());
  state::heap_keyed_state_backend other(state::key_group_range{3, 5});
  REQUIRE(other.restore(*handles).has_value());
  auto other_id = other.register_state("window-contents");
  REQUIRE(other.get(other_id, 4, "b", v));
  CHECK(decoded(v) == 8);
  CHECK_FALSE(other.get(other_id, 4, "a", v));
}

TEST_CASE("window accumulators agree with a map through many inserts, updates and erases") {
  // Enough keys to grow the table many times and erase enough to compact its key arena; keys of
  // varied lengths, many sharing prefixes (key bytes + window bytes).
  window_accumulators<std::int64_t> table;
  std::map<std::string, std::int64_t> reference;
  std::mt19937_64 rng(7);
  auto key_of = [](std::uint64_t n) {
    return "key-" + std::to_string(n % 5000) + "/window-" + std::to_string(n / 5000);
  };
  for (int round = 0; round < 200'000; ++round) {
    auto k = key_of(rng() % 40'000);
    auto op = rng() % 10;
    if (op < 7) {
      if (auto* e = table.find(k)) {
        REQUIRE(reference.count(k) == 1);
        e->value += 1;
        reference[k] += 1;
      } else {
        REQUIRE(reference.count(k) == 0);
        table.insert(k, static_cast<std::int32_t>(k.size()), 1, false);
        reference[k] = 1;
      }
    } else {
      bool in_backend = true;
      CHECK(table.erase(k, in_backend) == (reference.erase(k) == 1));
    }
    REQUIRE(table.size() == reference.size());
  }
  for (const auto& [k, v] : reference) {
    auto* e = table.find(k);
    REQUIRE(e != nullptr);
    CHECK(e->value == v);
    CHECK(e->key_group == static_cast<std::int32_t>(k.size()));
  }
  CHECK(table.find("key-none") == nullptr);
}
