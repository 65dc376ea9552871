// The RocksDB backend's cache of hot entries (`state.backend.rocksdb.cache.size`): hits, negative
// caching, write-back before a snapshot and before a prefix iteration, eviction by use, state ten
// times larger than the cache with the hashmap backend's outputs, restore at another
// parallelism; and the RocksDB options Flink users set.

#include "runtime/state/keyed_state_backend.hpp"

#include "runtime/config/configuration.hpp"
#include "runtime/state/rocksdb/rocksdb_keyed_state_backend.hpp"
#include "runtime/state/state_backend_options.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace flint;
using namespace flint::state;
using flint::state::test::temp_dir;

namespace {

class rocksdb_backends {
public:
  std::unique_ptr<rocksdb_keyed_state_backend> make(key_group_range key_groups, std::uint64_t cache,
                                                    rocksdb_backend_options rocksdb = {}) {
    keyed_state_backend_options options;
    options.type = "rocksdb";
    options.local_dir = dir_ / ("backend-" + std::to_string(next_++));
    options.rocksdb = std::move(rocksdb);
    options.rocksdb.cache_bytes = cache;
    auto backend = rocksdb_keyed_state_backend::create(options, key_groups);
    REQUIRE_MESSAGE(backend, (backend ? "" : backend.error().to_string()));
    return std::move(*backend);
  }
  std::unique_ptr<keyed_state_backend> make_heap(key_group_range key_groups) {
    keyed_state_backend_options options;
    auto backend = make_keyed_state_backend(options, key_groups);
    REQUIRE(backend);
    return std::move(*backend);
  }
  const temp_dir& dir() const { return dir_; }

private:
  temp_dir dir_;
  int next_ = 0;
};

std::vector<keyed_state_handle> take(keyed_snapshot_upload& upload, const snapshot_target& target) {
  auto handles = upload(target);
  REQUIRE_MESSAGE(handles, (handles ? "" : handles.error().to_string()));
  return std::move(*handles);
}

/// (state, key group, key) -> value, by for_each over every key group.
using contents = std::map<std::tuple<std::string, int, std::string>, std::string>;

contents dump(keyed_state_backend& backend, key_group_range range,
              const std::vector<std::string>& names) {
  contents out;
  for (const auto& name : names) {
    auto state = backend.register_state(name);
    for (int g = range.first; g <= range.last; ++g)
      backend.for_each(state, g, "", [&](std::string_view k, std::string_view v) {
        out[{name, g, std::string(k)}] = std::string(v);
      });
  }
  return out;
}

} // namespace

TEST_CASE("the rocksdb cache answers repeated gets, present or absent, without reading RocksDB") {
  rocksdb_backends made;
  auto backend = made.make({0, 3}, 1 << 20);
  auto s = backend->register_state("count");
  std::string value;
  CHECK_FALSE(backend->get(s, 1, "k", value));
  CHECK_FALSE(backend->get(s, 1, "k", value)); // the absence is cached
  auto stats = backend->cache_stats();
  CHECK(stats.misses == 1);
  CHECK(stats.hits == 1);
  backend->put(s, 1, "k", "1");
  for (int i = 0; i < 10; ++i) {
    REQUIRE(backend->get(s, 1, "k", value));
    CHECK(value == "1");
  }
  stats = backend->cache_stats();
  CHECK(stats.misses == 1);
  CHECK(stats.hits == 11);
  CHECK(stats.dirty == 1);
  CHECK(stats.batches == 0); // nothing written to RocksDB yet
  CHECK(stats.entries == 1);
  backend->remove(s, 1, "k");
  CHECK_FALSE(backend->get(s, 1, "k", value));
  CHECK(backend->cache_stats().misses == 1);
}

TEST_CASE("cached writes and removals reach RocksDB in one batch before a snapshot") {
  rocksdb_backends made;
  key_group_range range{0, 7};
  auto backend = made.make(range, 8 << 20);
  auto s = backend->register_state("count");
  contents expected;
  for (int i = 0; i < 500; ++i) {
    backend->put(s, i % 8, "key-" + std::to_string(i), "v" + std::to_string(i));
    expected[{"count", i % 8, "key-" + std::to_string(i)}] = "v" + std::to_string(i);
  }
  auto before = backend->cache_stats();
  CHECK(before.dirty == 500);
  CHECK(before.batches == 0);
  auto snapshot = backend->snapshot(1);
  auto after = backend->cache_stats();
  CHECK(after.dirty == 0);
  CHECK(after.batches == 1);
  CHECK(after.written == 500);
  CHECK(after.entries == 500); // still cached, now clean

  // Later writes and a removal: cached only, not in the snapshot.
  backend->put(s, 0, "key-0", "later");
  backend->remove(s, 1, "key-1");
  auto handles = take(snapshot, {made.dir() / "chk-1", made.dir() / "shared", "op"});
  auto restored = made.make(range, 0); // no cache: it reads what RocksDB holds
  REQUIRE(restored->restore(handles));
  CHECK(dump(*restored, range, {"count"}) == expected);

  // The next snapshot writes back exactly the two new changes.
  auto second = backend->snapshot(2);
  CHECK(backend->cache_stats().written == 502);
  expected[{"count", 0, "key-0"}] = "later";
  expected.erase({"count", 1, "key-1"});
  auto second_handles = take(second, {made.dir() / "chk-2", made.dir() / "shared", "op"});
  auto restored2 = made.make(range, 0);
  REQUIRE(restored2->restore(second_handles));
  CHECK(dump(*restored2, range, {"count"}) == expected);
}

TEST_CASE("for_each sees the cached writes and removals of its key group") {
  rocksdb_backends made;
  auto backend = made.make({0, 3}, 1 << 20);
  auto s = backend->register_state("map");
  backend->put(s, 2, "user/a", "1");
  backend->put(s, 2, "user/b", "2");
  backend->put(s, 3, "user/x", "other group");
  (void)backend->snapshot(1); // a and b in RocksDB now
  backend->remove(s, 2, "user/a");
  backend->put(s, 2, "user/c", "3");
  backend->put(s, 2, "user/b", "2'");
  std::vector<std::pair<std::string, std::string>> seen;
  backend->for_each(s, 2, "user/",
                    [&](std::string_view k, std::string_view v) { seen.emplace_back(k, v); });
  CHECK(seen
        == std::vector<std::pair<std::string, std::string>>{{"user/b", "2'"}, {"user/c", "3"}});
  // Only key group 2's writes went: key group 3's was written by the snapshot already, and
  // nothing of another group waits.
  CHECK(backend->cache_stats().dirty == 0);
  backend->put(s, 3, "user/y", "dirty in 3");
  backend->for_each(s, 2, "", [](std::string_view, std::string_view) {});
  CHECK(backend->cache_stats().dirty == 1);
}

TEST_CASE(
  "a full cache evicts entries not used lately (CLOCK), writing the dirty ones in batches") {
  rocksdb_backends made;
  constexpr std::uint64_t cache = 64 << 10;
  auto backend = made.make({0, 0}, cache);
  auto s = backend->register_state("count");
  std::string value;
  backend->put(s, 0, "hot", "h");
  for (int i = 0; i < 5000; ++i) {
    backend->put(s, 0, "cold-" + std::to_string(i), std::string(32, 'c'));
    // Used all the time: it keeps its second chance and stays.
    REQUIRE(backend->get(s, 0, "hot", value));
  }
  auto stats = backend->cache_stats();
  CHECK(stats.bytes <= cache);
  CHECK(stats.evictions > 4000);
  // Evictions go down to 7/8 of the size at once: many entries per batch.
  CHECK(stats.batches > 0);
  CHECK(stats.batches * 10 < stats.evictions);
  CHECK(stats.written == stats.evictions); // every evicted entry was dirty
  CHECK(stats.misses == 0); // "hot" stayed
  REQUIRE(backend->get(s, 0, "cold-0", value)); // evicted: read back from RocksDB
  CHECK(value == std::string(32, 'c'));
  CHECK(backend->cache_stats().misses == 1);
  // Entries larger than an eighth of the cache bypass it.
  backend->put(s, 0, "big", std::string(cache, 'b'));
  REQUIRE(backend->get(s, 0, "big", value));
  CHECK(value.size() == cache);
  CHECK(backend->cache_stats().bytes <= cache);
}

namespace {

/// A keyed workload as operators make it: per record a count (get + put, as a reduce does), a
/// MapState-like entry per (key, bucket) listed by prefix every so often (as a window or timers
/// do) and removed now and then. Keys follow a Zipf-like skew over `keys` keys. Returns the
/// outputs, one line per record, so two backends can be compared output for output.
std::vector<std::string> run_workload(keyed_state_backend& backend, key_group_range range,
                                      int max_parallelism, int records, int keys,
                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> cumulative(static_cast<std::size_t>(keys));
  double sum = 0;
  for (int i = 0; i < keys; ++i)
    cumulative[static_cast<std::size_t>(i)] = (sum += 1.0 / (i + 1));
  std::uniform_real_distribution<double> uniform(0, sum);
  auto counts = backend.register_state("count");
  auto buckets = backend.register_state("buckets");
  std::vector<std::string> out;
  std::string value;
  for (int r = 0; r < records; ++r) {
    int k = static_cast<int>(std::lower_bound(cumulative.begin(), cumulative.end(), uniform(rng))
                             - cumulative.begin());
    int group = k % max_parallelism;
    if (!range.contains(group))
      continue;
    auto key = "key-" + std::to_string(k) + std::string(40, 'p'); // state 10x the cache
    std::int64_t count = backend.get(counts, group, key, value) ? std::stoll(value) : 0;
    backend.put(counts, group, key, std::to_string(++count));
    auto bucket = key + "/" + std::to_string(r % 4);
    backend.put(buckets, group, bucket, std::to_string(r));
    std::string line = key + "=" + std::to_string(count);
    if (count % 7 == 0) {
      backend.for_each(buckets, group, key + "/", [&](std::string_view k2, std::string_view v) {
        line += " " + std::string(k2.substr(key.size())) + ":" + std::string(v);
      });
      backend.remove(buckets, group, key + "/0");
    }
    out.push_back(std::move(line));
  }
  return out;
}

} // namespace

TEST_CASE(
  "state 10x the cache: rocksdb with the cache gives the hashmap backend's outputs, "
  "through a snapshot and a restore at another parallelism") {
  constexpr int max_parallelism = 16;
  constexpr std::uint64_t cache = 128 << 10;
  constexpr int keys = 20000;
  rocksdb_backends made;
  key_group_range all{0, max_parallelism - 1};

  // Phase 1 at parallelism 2, both backends side by side, a snapshot at the end.
  std::vector<keyed_state_handle> heap_handles, rocks_handles;
  std::uint64_t evictions = 0;
  for (int i = 0; i < 2; ++i) {
    auto range = key_group_range_for_operator(max_parallelism, 2, i);
    auto heap = made.make_heap(range);
    auto rocks = made.make(range, cache);
    auto heap_out = run_workload(*heap, range, max_parallelism, 60000, keys, 1);
    auto rocks_out = run_workload(*rocks, range, max_parallelism, 60000, keys, 1);
    CHECK(rocks_out == heap_out);
    CHECK(dump(*rocks, range, {"count", "buckets"}) == dump(*heap, range, {"count", "buckets"}));
    auto stats = rocks->cache_stats();
    CHECK(stats.bytes <= cache);
    CHECK(stats.hits > 0);
    evictions += stats.evictions;
    auto heap_snapshot = heap->snapshot(1);
    auto rocks_snapshot = rocks->snapshot(1);
    auto target = [&](const std::string& who) {
      return snapshot_target{made.dir() / ("chk-1-" + who), made.dir() / "shared",
                             who + "-" + std::to_string(i)};
    };
    auto h = take(heap_snapshot, target("heap"));
    auto r = take(rocks_snapshot, target("rocks"));
    heap_handles.insert(heap_handles.end(), h.begin(), h.end());
    rocks_handles.insert(rocks_handles.end(), r.begin(), r.end());
  }
  CHECK(evictions > 0);

  // The state is ten times the cache and more.
  {
    auto whole = made.make_heap(all);
    REQUIRE(whole->restore(heap_handles));
    std::uint64_t bytes = 0;
    for (const auto& [k, v] : dump(*whole, all, {"count", "buckets"}))
      bytes += std::get<2>(k).size() + v.size();
    CHECK(bytes > 10 * cache);
  }

  // Phase 2 at parallelism 3: each restored from its own backend's snapshot, the workload goes
  // on, outputs and state equal.
  for (int i = 0; i < 3; ++i) {
    auto range = key_group_range_for_operator(max_parallelism, 3, i);
    auto heap = made.make_heap(range);
    auto rocks = made.make(range, cache);
    REQUIRE(heap->restore(heap_handles));
    REQUIRE(rocks->restore(rocks_handles));
    CHECK(dump(*rocks, range, {"count", "buckets"}) == dump(*heap, range, {"count", "buckets"}));
    auto heap_out = run_workload(*heap, range, max_parallelism, 30000, keys, 2);
    auto rocks_out = run_workload(*rocks, range, max_parallelism, 30000, keys, 2);
    CHECK(rocks_out == heap_out);
    CHECK(dump(*rocks, range, {"count", "buckets"}) == dump(*heap, range, {"count", "buckets"}));
    CHECK(rocks->cache_stats().bytes <= cache);
  }
}

TEST_CASE("the RocksDB options Flink users set take effect in the instance") {
  rocksdb_backends made;
  // Managed (Flink's default): one budget, half of it for write buffers.
  rocksdb_backend_options managed;
  managed.managed_bytes = 64 << 20;
  auto a = made.make({0, 1}, 0, managed)->rocksdb_settings();
  CHECK(a["block_cache_capacity"] == std::to_string(64 << 20));
  CHECK(a["write_buffer_manager"] == std::to_string(32 << 20));
  CHECK(a["compaction_style"] == "0"); // LEVEL

  rocksdb_backend_options unmanaged;
  unmanaged.memory_managed = false;
  unmanaged.block_cache_bytes = 16 << 20;
  unmanaged.write_buffer_bytes = 8 << 20;
  unmanaged.compaction_style = "universal";
  auto b = made.make({0, 1}, 0, unmanaged)->rocksdb_settings();
  CHECK(b["block_cache_capacity"] == std::to_string(16 << 20));
  CHECK(b["write_buffer_size"] == std::to_string(8 << 20));
  CHECK(b["write_buffer_manager"] == "none");
  CHECK(b["compaction_style"] == "1"); // UNIVERSAL

  // Flink's SPINNING_DISK_OPTIMIZED_HIGH_MEM, with the block cache left to it.
  rocksdb_backend_options high_mem;
  high_mem.memory_managed = false;
  high_mem.predefined_options = "SPINNING_DISK_OPTIMIZED_HIGH_MEM";
  auto c = made.make({0, 1}, 0, high_mem)->rocksdb_settings();
  CHECK(c["block_cache_capacity"] == std::to_string(256 << 20));
  CHECK(c["max_open_files"] == "-1");
  CHECK(c["max_write_buffer_number"] == "4");

  keyed_state_backend_options bad;
  bad.type = "rocksdb";
  bad.local_dir = made.dir() / "bad";
  bad.rocksdb.compaction_style = "SIDEWAYS";
  auto refused = make_keyed_state_backend(bad, {0, 1});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("state.backend.rocksdb.compaction.style")
        != std::string::npos);
}

TEST_CASE("keyed_state_backend_options_from reads state.backend.* and state.backend.rocksdb.*") {
  config::configuration cfg;
  auto defaults = keyed_state_backend_options_from(cfg);
  REQUIRE(defaults);
  CHECK(defaults->type == "hashmap");
  CHECK(defaults->rocksdb.cache_bytes == 64 << 20);
  CHECK(defaults->rocksdb.memory_managed);
  CHECK_FALSE(defaults->rocksdb.block_cache_bytes);
  CHECK(defaults->rocksdb.predefined_options == "DEFAULT");

  cfg.set("state.backend.type", "rocksdb");
  cfg.set("state.backend.incremental", "true");
  cfg.set("state.backend.rocksdb.cache.size", "0");
  cfg.set("state.backend.rocksdb.memory.managed", "false");
  cfg.set("state.backend.rocksdb.block.cache-size", "32 mb");
  cfg.set("state.backend.rocksdb.writebuffer.size", "16 mb");
  cfg.set("state.backend.rocksdb.compaction.style", "FIFO");
  cfg.set("state.backend.rocksdb.predefined-options", "FLASH_SSD_OPTIMIZED");
  auto set = keyed_state_backend_options_from(cfg);
  REQUIRE(set);
  CHECK(set->type == "rocksdb");
  CHECK(set->incremental);
  CHECK(set->rocksdb.cache_bytes == 0);
  CHECK_FALSE(set->rocksdb.memory_managed);
  CHECK(set->rocksdb.block_cache_bytes == std::uint64_t{32 << 20});
  CHECK(set->rocksdb.write_buffer_bytes == std::uint64_t{16 << 20});
  CHECK(set->rocksdb.compaction_style == std::string("FIFO"));
  CHECK(set->rocksdb.predefined_options == "FLASH_SSD_OPTIMIZED");

  cfg.set("state.backend.rocksdb.compaction.style", "SIDEWAYS");
  auto bad = keyed_state_backend_options_from(cfg);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("state.backend.rocksdb.compaction.style") != std::string::npos);
  cfg.set("state.backend.rocksdb.compaction.style", "LEVEL");
  cfg.set("state.backend.rocksdb.cache.size", "lots");
  auto unparsed = keyed_state_backend_options_from(cfg);
  REQUIRE_FALSE(unparsed);
  CHECK(unparsed.error().message.find("state.backend.rocksdb.cache.size") != std::string::npos);
}

TEST_CASE(
  "random gets, puts, removals, prefix listings and snapshots agree with the hashmap "
  "backend at every step, through constant eviction") {
  rocksdb_backends made;
  key_group_range range{0, 3};
  auto heap = made.make_heap(range);
  // About 25 entries fit: most operations evict, write back or read back.
  auto rocks = made.make(range, 6 << 10);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> op(0, 99), group(0, 3), key(0, 199), size(0, 60);
  std::vector<std::uint32_t> h_states, r_states;
  for (const char* name : {"a", "b"}) {
    h_states.push_back(heap->register_state(name));
    r_states.push_back(rocks->register_state(name));
  }
  std::string hv, rv;
  for (int i = 0; i < 40000; ++i) {
    CAPTURE(i);
    auto s = static_cast<std::size_t>(i % 2);
    int g = group(rng);
    // Keys share prefixes ("k1", "k1/3", ...) as MapState entries do.
    auto k = "k" + std::to_string(key(rng) % 20) + "/" + std::to_string(key(rng) % 10);
    int o = op(rng);
    if (o < 40) {
      bool h = heap->get(h_states[s], g, k, hv);
      bool r = rocks->get(r_states[s], g, k, rv);
      REQUIRE(h == r);
      if (h)
        REQUIRE(hv == rv);
    } else if (o < 75) {
      auto v = std::string(static_cast<std::size_t>(size(rng)), static_cast<char>('a' + i % 26));
      heap->put(h_states[s], g, k, v);
      rocks->put(r_states[s], g, k, v);
    } else if (o < 90) {
      heap->remove(h_states[s], g, k);
      rocks->remove(r_states[s], g, k);
    } else if (o < 99) {
      auto prefix = k.substr(0, k.find('/') + (o % 2));
      std::vector<std::pair<std::string, std::string>> h, r;
      heap->for_each(h_states[s], g, prefix,
                     [&](std::string_view a, std::string_view b) { h.emplace_back(a, b); });
      rocks->for_each(r_states[s], g, prefix,
                      [&](std::string_view a, std::string_view b) { r.emplace_back(a, b); });
      REQUIRE(h == r);
    } else {
      (void)rocks->snapshot(i);
      CHECK(rocks->cache_stats().dirty == 0);
    }
    REQUIRE(rocks->cache_stats().bytes <= (6 << 10));
  }
  auto stats = rocks->cache_stats();
  CHECK(stats.evictions > 1000);
  CHECK(stats.hits > 100);
  CHECK(dump(*rocks, range, {"a", "b"}) == dump(*heap, range, {"a", "b"}));
}
