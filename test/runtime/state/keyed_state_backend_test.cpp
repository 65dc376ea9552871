#include "runtime/state/keyed_state_backend.hpp"

#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/keyed_state_files.hpp"
#include "runtime/state/rocksdb/rocksdb_keyed_state_backend.hpp"

#include "test/runtime/state/state_test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

using namespace flint;
using namespace flint::state;
using flint::state::test::temp_dir;

namespace {

// The backends under test, each also in the role of the other's restorer. RocksDB with its
// cache of hot entries at the default size (nothing evicted here), without it, and with one so
// small that most entries go through eviction and write-back.
struct hashmap_backend {
  static constexpr const char* type = "hashmap";
  static constexpr bool incremental = false;
  static constexpr std::uint64_t cache = 0;
};
struct rocksdb_full_backend {
  static constexpr const char* type = "rocksdb";
  static constexpr bool incremental = false;
  static constexpr std::uint64_t cache = 64 << 20; // the default
};
struct rocksdb_incremental_backend {
  static constexpr const char* type = "rocksdb";
  static constexpr bool incremental = true;
  static constexpr std::uint64_t cache = 64 << 20; // the default
};
struct rocksdb_uncached_backend {
  static constexpr const char* type = "rocksdb";
  static constexpr bool incremental = false;
  static constexpr std::uint64_t cache = 0;
};
struct rocksdb_small_cache_backend {
  static constexpr const char* type = "rocksdb";
  static constexpr bool incremental = true;
  static constexpr std::uint64_t cache = 8 << 10;
};

/// (state name, key group, key) -> value: what a backend holds.
using contents = std::map<std::tuple<std::string, int, std::string>, std::string>;

const std::vector<std::string> state_names = {"count", "window-contents"};

/// Makes backends with local directories under one temporary directory.
class backends {
public:
  std::unique_ptr<keyed_state_backend> make(const char* type, bool incremental,
                                            key_group_range key_groups,
                                            std::uint64_t cache = 64 << 20) {
    keyed_state_backend_options options;
    options.type = type;
    options.incremental = incremental;
    options.rocksdb.cache_bytes = cache;
    options.local_dir = dir_ / ("backend-" + std::to_string(next_++));
    auto backend = make_keyed_state_backend(options, key_groups);
    REQUIRE(backend);
    return std::move(*backend);
  }
  template <class Backend>
  std::unique_ptr<keyed_state_backend> make(key_group_range key_groups) {
    return make(Backend::type, Backend::incremental, key_groups, Backend::cache);
  }
  const temp_dir& dir() const { return dir_; }

private:
  temp_dir dir_;
  int next_ = 0;
};

/// Puts `count` entries spread over `key_groups` into every state of `state_names`; returns them.
contents fill(keyed_state_backend& backend, key_group_range key_groups, int count,
              const std::string& tag = "v") {
  contents out;
  for (const auto& name : state_names) {
    auto state = backend.register_state(name);
    for (int i = 0; i < count; ++i) {
      int key_group = key_groups.first + i % key_groups.size();
      auto key = "key-" + std::to_string(i);
      auto value = tag + "-" + name + "-" + std::to_string(i);
      backend.put(state, key_group, key, value);
      out[{name, key_group, key}] = value;
    }
  }
  return out;
}

/// Everything `backend` holds in `key_groups` (for_each with no prefix).
contents dump(keyed_state_backend& backend, key_group_range key_groups) {
  contents out;
  for (const auto& name : state_names) {
    auto state = backend.register_state(name);
    for (int g = key_groups.first; g <= key_groups.last; ++g)
      backend.for_each(state, g, "", [&](std::string_view key, std::string_view value) {
        out[{name, g, std::string(key)}] = std::string(value);
      });
  }
  return out;
}

/// The entries of `all` in `key_groups`.
contents within(const contents& all, key_group_range key_groups) {
  contents out;
  for (const auto& [k, v] : all)
    if (key_groups.contains(std::get<1>(k)))
      out.emplace(k, v);
  return out;
}

std::vector<keyed_state_handle> upload(keyed_snapshot_upload& upload, const std::string& chk_dir,
                                       const std::string& shared_dir, const std::string& prefix) {
  auto handles = upload(snapshot_target{chk_dir, shared_dir, prefix});
  REQUIRE_MESSAGE(handles, handles.error().to_string());
  return std::move(*handles);
}

} // namespace

TYPE_TO_STRING(hashmap_backend);
TYPE_TO_STRING(rocksdb_full_backend);
TYPE_TO_STRING(rocksdb_incremental_backend);
TYPE_TO_STRING(rocksdb_uncached_backend);
TYPE_TO_STRING(rocksdb_small_cache_backend);

TEST_CASE_TEMPLATE("a backend gets, puts and removes entries and lists a prefix in key order", B,
                   hashmap_backend, rocksdb_full_backend, rocksdb_incremental_backend,
                   rocksdb_uncached_backend, rocksdb_small_cache_backend) {
  backends made;
  auto backend = made.make<B>({0, 3});
  auto a = backend->register_state("a");
  auto b = backend->register_state("b");
  std::string value;
  CHECK_FALSE(backend->get(a, 1, "k", value));
  backend->put(a, 1, "k", "v1");
  backend->put(b, 1, "k", "other state");
  backend->put(a, 2, "k", "other key group");
  REQUIRE(backend->get(a, 1, "k", value));
  CHECK(value == "v1");
  backend->put(a, 1, "k", "v2");
  REQUIRE(backend->get(a, 1, "k", value));
  CHECK(value == "v2");
  REQUIRE(backend->get(b, 1, "k", value));
  CHECK(value == "other state");
  backend->remove(a, 1, "k");
  CHECK_FALSE(backend->get(a, 1, "k", value));
  backend->remove(a, 1, "never there");
  REQUIRE(backend->get(a, 2, "k", value));
  CHECK(value == "other key group");

  // A MapState's entries: key + user key, listed by the key as prefix, in byte order.
  for (const auto& user_key : std::vector<std::string>{"m", "b", "z", "a", std::string("\0x", 2)})
    backend->put(a, 3, "user1/" + user_key, user_key);
  backend->put(a, 3, std::string("user1/\xff", 7), "high byte");
  backend->put(a, 3, "user0/a", "before");
  backend->put(a, 3, "user2/a", "after");
  backend->put(a, 3, "user1", "the prefix itself");
  backend->put(b, 3, "user1/q", "other state");
  std::vector<std::string> keys;
  backend->for_each(a, 3, "user1/",
                    [&](std::string_view key, std::string_view) { keys.emplace_back(key); });
  CHECK(keys
        == std::vector<std::string>{std::string("user1/\0x", 8), "user1/a", "user1/b", "user1/m",
                                    "user1/z", std::string("user1/\xff", 7)});
  keys.clear();
  backend->for_each(a, 3, "",
                    [&](std::string_view key, std::string_view) { keys.emplace_back(key); });
  CHECK(keys.size() == 9);
  CHECK(keys.front() == "user0/a");
  CHECK(keys.back() == "user2/a");
  int calls = 0;
  backend->for_each(a, 0, "", [&](std::string_view, std::string_view) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE_TEMPLATE("register_state gives a state the same number by name, also after a restore", B,
                   hashmap_backend, rocksdb_full_backend, rocksdb_incremental_backend,
                   rocksdb_uncached_backend, rocksdb_small_cache_backend) {
  backends made;
  auto backend = made.make<B>({0, 7});
  auto a = backend->register_state("a");
  auto b = backend->register_state("b");
  CHECK(a != b);
  CHECK(backend->register_state("a") == a);
  CHECK(backend->register_state("b") == b);
  backend->put(b, 5, "k", "of b");
  auto snapshot = backend->snapshot(1);
  auto handles = upload(snapshot, "", "", "op-0-0");

  // The restored backend learns "b" from the snapshot, before the operator registers anything.
  auto restored = made.make<B>({0, 7});
  REQUIRE(restored->restore(handles));
  auto c = restored->register_state("c");
  auto b2 = restored->register_state("b");
  CHECK(c != b2);
  CHECK(restored->register_state("c") == c);
  std::string value;
  REQUIRE(restored->get(b2, 5, "k", value));
  CHECK(value == "of b");
}

TEST_CASE_TEMPLATE("a snapshot holds the state at its time, not later writes, and restores", B,
                   hashmap_backend, rocksdb_full_backend, rocksdb_incremental_backend,
                   rocksdb_uncached_backend, rocksdb_small_cache_backend) {
  backends made;
  key_group_range range{0, 15};
  auto backend = made.make<B>(range);
  auto at_snapshot = fill(*backend, range, 2000);
  auto snapshot = backend->snapshot(1);

  // Written after the synchronous part: not in the snapshot.
  auto later = fill(*backend, range, 100, "later");
  auto count = backend->register_state("count");
  backend->remove(count, 1, "key-1");
  backend->put(count, 2, "new-key", "new");
  CHECK(dump(*backend, range).count({"count", 2, "new-key"}) == 1);

  auto chk = made.dir() / "chk-1";
  auto handles = upload(snapshot, chk, made.dir() / "shared", "op-0-0");
  REQUIRE(handles.size() == 1);
  CHECK(handles[0].first_key_group == 0);
  CHECK(handles[0].last_key_group == 15);
  CHECK(handles[0].incremental == B::incremental);
  if (B::incremental) {
    CHECK_FALSE(handles[0].shared_files.empty());
    CHECK_FALSE(handles[0].private_files.empty());
    for (const auto& file : handles[0].shared_files)
      CHECK(std::filesystem::exists(file.handle.path));
  } else {
    CHECK_FALSE(handles[0].data.is_inline());
    CHECK(handles[0].data.path == chk + "/op-0-0-keyed");
    CHECK(std::filesystem::exists(chk + "/op-0-0-keyed"));
  }

  auto restored = made.make<B>(range);
  REQUIRE(restored->restore(handles));
  CHECK(dump(*restored, range) == at_snapshot);
  // The live backend went on.
  CHECK(dump(*backend, range) != at_snapshot);
}

TEST_CASE_TEMPLATE("a snapshot without a checkpoint directory travels inline and restores", B,
                   hashmap_backend, rocksdb_full_backend, rocksdb_incremental_backend,
                   rocksdb_uncached_backend, rocksdb_small_cache_backend) {
  backends made;
  key_group_range range{4, 9};
  auto backend = made.make<B>(range);
  auto at_snapshot = fill(*backend, range, 300);
  auto snapshot = backend->snapshot(7);
  fill(*backend, range, 10, "later");
  auto handles = upload(snapshot, "", "", "op-1-0");
  REQUIRE(handles.size() == 1);
  CHECK_FALSE(handles[0].incremental); // also an incremental backend's: nowhere to put files
  CHECK(handles[0].data.is_inline());
  CHECK(handles[0].first_key_group == 4);
  CHECK(handles[0].last_key_group == 9);
  auto restored = made.make<B>(range);
  REQUIRE(restored->restore(handles));
  CHECK(dump(*restored, range) == at_snapshot);
}

TEST_CASE_TEMPLATE("a restore at another parallelism takes exactly each subtask's key groups", B,
                   hashmap_backend, rocksdb_full_backend, rocksdb_incremental_backend,
                   rocksdb_uncached_backend, rocksdb_small_cache_backend) {
  constexpr int max_parallelism = 12;
  backends made;
  for (auto [from, to] : {std::pair{2, 3}, std::pair{3, 2}}) {
    CAPTURE(from);
    CAPTURE(to);
    contents all;
    std::vector<keyed_state_handle> handles;
    for (int i = 0; i < from; ++i) {
      auto range = key_group_range_for_operator(max_parallelism, from, i);
      auto backend = made.make<B>(range);
      auto entries = fill(*backend, range, 600, "s" + std::to_string(i));
      all.insert(entries.begin(), entries.end());
      auto snapshot = backend->snapshot(3);
      auto chk = made.dir() / ("chk-" + std::to_string(from) + "-" + std::to_string(to));
      auto uploaded = upload(snapshot, chk, made.dir() / "shared", "op-" + std::to_string(i));
      handles.insert(handles.end(), uploaded.begin(), uploaded.end());
    }
    contents restored_all;
    for (int i = 0; i < to; ++i) {
      auto range = key_group_range_for_operator(max_parallelism, to, i);
      auto restored = made.make<B>(range);
      REQUIRE(restored->restore(handles));
      auto entries = dump(*restored, range);
      CHECK(entries == within(all, range));
      restored_all.insert(entries.begin(), entries.end());
    }
    CHECK(restored_all == all);
  }
}

TEST_CASE("a missing or malformed keyed state file is an error naming it") {
  backends made;
  key_group_range range{0, 3};
  auto backend = made.make<hashmap_backend>(range);
  fill(*backend, range, 40);
  auto snapshot = backend->snapshot(1);
  auto handles = upload(snapshot, made.dir() / "chk-1", "", "op-0-0");
  auto path = handles[0].data.path;

  std::filesystem::resize_file(path, handles[0].data.size - 1);
  auto truncated = made.make<hashmap_backend>(range)->restore(handles);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find(path) != std::string::npos);

  // A file of the right size whose last key group's bytes are cut short.
  handles[0].data.size -= 1;
  auto malformed = made.make<hashmap_backend>(range)->restore(handles);
  REQUIRE_FALSE(malformed);
  CHECK(malformed.error().code == errc::invalid_argument);
  CHECK(malformed.error().message.find("key group 3") != std::string::npos);
  CHECK(malformed.error().message.find(path) != std::string::npos);

  std::filesystem::remove(path);
  auto missing = made.make<hashmap_backend>(range)->restore(handles);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find(path) != std::string::npos);
}

TEST_CASE("an unknown state backend type is refused naming state.backend.type") {
  keyed_state_backend_options options;
  options.type = "memory";
  auto backend = make_keyed_state_backend(options, {0, 1});
  REQUIRE_FALSE(backend);
  CHECK(backend.error().code == errc::invalid_argument);
  CHECK(backend.error().message
        == "Unknown state backend 'memory' (state.backend.type: hashmap or rocksdb)");
}

TEST_CASE("key group entries keep their states by name, in order, and drop empty sections") {
  key_group_entries_writer writer;
  CHECK(writer.take().empty());
  writer.begin_state("empty");
  writer.begin_state("a");
  writer.add("k1", "v1");
  writer.add("", "");
  writer.begin_state("also empty");
  writer.begin_state("b");
  writer.add(std::string("\0k", 2), "v");
  auto bytes = writer.take();
  CHECK(writer.take().empty());
  std::vector<std::tuple<std::string, std::string, std::string>> read;
  auto ok = read_key_group_entries(
    bytes, [&](auto name, auto key, auto value) { read.emplace_back(name, key, value); });
  REQUIRE(ok);
  CHECK(read
        == std::vector<std::tuple<std::string, std::string, std::string>>{
          {"a", "k1", "v1"}, {"a", "", ""}, {"b", std::string("\0k", 2), "v"}});
  // Cut anywhere but after section "a" (4 + 1 + 4 + 12 + 8 bytes).
  constexpr std::size_t first_section = 29;
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    if (cut == first_section)
      continue;
    auto bad =
      read_key_group_entries(std::span<const char>(bytes).first(cut), [](auto, auto, auto) {});
    CHECK_FALSE(bad);
    if (!bad)
      CHECK(bad.error().code == errc::invalid_argument);
  }
}

TEST_CASE("the hashmap backend refuses an incremental RocksDB handle") {
  backends made;
  keyed_state_handle handle;
  handle.first_key_group = 0;
  handle.last_key_group = 3;
  handle.incremental = true;
  auto restored = made.make<hashmap_backend>({0, 3})->restore({handle});
  REQUIRE_FALSE(restored);
  CHECK(restored.error().code == errc::invalid_argument);
  CHECK(restored.error().message
        == "keyed state handle of key groups [0, 3] is an incremental RocksDB checkpoint: only "
           "state.backend.type: rocksdb restores it");
}

TEST_CASE("full snapshots restore across backends, hashmap to rocksdb and back") {
  backends made;
  key_group_range range{0, 31};
  auto heap = made.make<hashmap_backend>(range);
  auto entries = fill(*heap, range, 1500);
  auto heap_snapshot = heap->snapshot(1);
  auto heap_handles = upload(heap_snapshot, made.dir() / "chk-1", "", "heap");

  auto rocks = made.make<rocksdb_full_backend>(range);
  REQUIRE(rocks->restore(heap_handles));
  CHECK(dump(*rocks, range) == entries);
  auto count = rocks->register_state("count");
  rocks->put(count, 3, "from-rocksdb", "x");
  entries[{"count", 3, "from-rocksdb"}] = "x";
  auto rocks_snapshot = rocks->snapshot(2);
  auto rocks_handles = upload(rocks_snapshot, made.dir() / "chk-2", "", "rocks");

  // Both halves of a rescaled job, from the other backend's file.
  contents back;
  for (auto half : {key_group_range{0, 15}, key_group_range{16, 31}}) {
    auto restored = made.make<hashmap_backend>(half);
    REQUIRE(restored->restore(rocks_handles));
    auto part = dump(*restored, half);
    CHECK(part == within(entries, half));
    back.insert(part.begin(), part.end());
  }
  CHECK(back == entries);
}

namespace {

/// The files in `dir` (none if it does not exist).
std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.insert(it->path().string());
  return out;
}

std::set<std::string> shared_paths(const keyed_state_handle& handle) {
  std::set<std::string> out;
  for (const auto& file : handle.shared_files)
    out.insert(file.handle.path);
  return out;
}

// RocksDB compacts in the background, so which SSTs a snapshot holds is its choice. What the
// backend decides is checked: an SST the base checkpoint uploaded is referred to at its path, and
// every other one is uploaded under this checkpoint's own name; nothing else lands in shared/.
void check_increment(const keyed_state_handle& handle, const keyed_state_handle* base,
                     std::int64_t checkpoint_id, const std::set<std::string>& shared_before,
                     const std::filesystem::path& shared) {
  std::map<std::string, std::string> base_paths;
  if (base)
    for (const auto& file : base->shared_files)
      base_paths[file.name] = file.handle.path;
  auto expected_shared = shared_before;
  for (const auto& file : handle.shared_files) {
    expected_shared.insert(file.handle.path);
    auto reused = base_paths.find(file.name);
    if (reused != base_paths.end()) {
      CHECK(file.handle.path == reused->second);
      continue;
    }
    CHECK(shared_before.count(file.handle.path) == 0);
    CHECK(std::filesystem::path(file.handle.path)
            .filename()
            .string()
            .find("-" + std::to_string(checkpoint_id) + "-" + file.name)
          != std::string::npos);
  }
  CHECK(files_in(shared) == expected_shared);
}

} // namespace

TEST_CASE("an incremental checkpoint uploads only the SST files the last completed one lacks") {
  backends made;
  key_group_range range{0, 15};
  auto shared = made.dir() / "shared";
  auto backend = made.make<rocksdb_incremental_backend>(range);
  auto entries = fill(*backend, range, 3000);

  auto first_snapshot = backend->snapshot(1);
  auto first = upload(first_snapshot, made.dir() / "chk-1", shared, "op-0-0");
  REQUIRE(first.size() == 1);
  REQUIRE(first[0].incremental);
  auto after_first = files_in(shared);
  CHECK(after_first == shared_paths(first[0]));
  CHECK_FALSE(after_first.empty());
  for (const auto& file : first[0].private_files)
    CHECK(file.handle.path.starts_with(made.dir() / "chk-1/op-0-0-"));
  backend->notify_checkpoint_complete(1);

  // A little change: one new SST, the others referred to again.
  auto count = backend->register_state("count");
  for (int i = 0; i < 5; ++i) {
    backend->put(count, i, "changed-" + std::to_string(i), "new");
    entries[{"count", i, "changed-" + std::to_string(i)}] = "new";
  }
  backend->remove(count, 1, "key-1");
  entries.erase({"count", 1, "key-1"});
  auto second_snapshot = backend->snapshot(2);
  auto second = upload(second_snapshot, made.dir() / "chk-2", shared, "op-0-0");
  REQUIRE(second.size() == 1);
  check_increment(second[0], &first[0], 2, after_first, shared);
  auto after_second = files_in(shared);
  auto second_paths = shared_paths(second[0]);
  CHECK(after_second.size() > after_first.size());

  // Until checkpoint 2 completes, a third builds on checkpoint 1 only: it uploads anew the SST
  // checkpoint 2 added, under a name of its own.
  auto third_snapshot = backend->snapshot(3);
  auto third = upload(third_snapshot, made.dir() / "chk-3", shared, "op-0-0");
  REQUIRE(third.size() == 1);
  check_increment(third[0], &first[0], 3, after_second, shared);
  CHECK(files_in(shared).size() > after_second.size());

  // Checkpoint 2 restores to exactly its state, at the same parallelism and rescaled.
  auto restored = made.make<rocksdb_incremental_backend>(range);
  REQUIRE(restored->restore(second));
  CHECK(dump(*restored, range) == entries);
  auto half = made.make<rocksdb_incremental_backend>({8, 15});
  REQUIRE(half->restore(second));
  CHECK(dump(*half, {8, 15}) == within(entries, {8, 15}));
  auto heap = made.make<hashmap_backend>(range);
  CHECK_FALSE(heap->restore(second));

  // The restored instance goes on from checkpoint 2's files: its next checkpoint uploads only
  // what changed since.
  backend.reset();
  auto before = files_in(shared);
  restored->put(restored->register_state("count"), 2, "after-restore", "1");
  auto next_snapshot = restored->snapshot(4);
  auto next = upload(next_snapshot, made.dir() / "chk-4", shared, "op-0-1");
  REQUIRE(next.size() == 1);
  check_increment(next[0], &second[0], 4, before, shared);
  CHECK(files_in(shared).size() > before.size());
}

TEST_CASE("an incremental restore with a missing or truncated file is an error naming it") {
  backends made;
  key_group_range range{0, 7};
  auto backend = made.make<rocksdb_incremental_backend>(range);
  fill(*backend, range, 500);
  auto snapshot = backend->snapshot(1);
  auto handles = upload(snapshot, made.dir() / "chk-1", made.dir() / "shared", "op-0-0");
  REQUIRE_FALSE(handles[0].shared_files.empty());

  auto sst = handles[0].shared_files[0].handle.path;
  std::filesystem::resize_file(sst, handles[0].shared_files[0].handle.size / 2);
  auto truncated = made.make<rocksdb_incremental_backend>(range)->restore(handles);
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find(sst) != std::string::npos);
  CHECK(truncated.error().message.find("truncated") != std::string::npos);

  std::filesystem::remove(sst);
  for (auto restore_range : {range, key_group_range{0, 3}}) { // opened directly, and rescaled
    auto missing = made.make<rocksdb_incremental_backend>(restore_range)->restore(handles);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == errc::not_found);
    CHECK(missing.error().message.find(sst) != std::string::npos);
  }

  auto manifest = handles[0].private_files[0].handle.path;
  auto copy = handles;
  copy[0].shared_files.clear();
  std::filesystem::remove(manifest);
  auto missing_private = made.make<rocksdb_incremental_backend>(range)->restore(copy);
  REQUIRE_FALSE(missing_private);
  CHECK(missing_private.error().message.find(manifest) != std::string::npos);
}

TEST_CASE("the shared files of a checkpoint are those its incremental handles refer to") {
  backends made;
  key_group_range range{0, 3};
  auto backend = made.make<rocksdb_incremental_backend>(range);
  fill(*backend, range, 200);
  auto snapshot = backend->snapshot(1);
  auto handles = upload(snapshot, made.dir() / "chk-1", made.dir() / "shared", "op-0-0");
  checkpoint_metadata metadata;
  metadata.checkpoint_id = 1;
  operator_state op;
  op.operator_id = test::op_id(1);
  op.subtasks = {{test::op_id(1), handles, {}}};
  metadata.operators = {op};
  auto listed = shared_state_files(metadata);
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == files_in(made.dir() / "shared"));
}

TEST_CASE("a rocksdb backend keeps its instance in its local directory and removes it at the end") {
  backends made;
  auto local = made.dir() / "local";
  std::filesystem::create_directories(local + "/left-over");
  keyed_state_backend_options options{"rocksdb", true, local, {}};
  {
    auto backend = make_keyed_state_backend(options, {0, 3});
    REQUIRE(backend);
    CHECK_FALSE(std::filesystem::exists(local + "/left-over"));
    CHECK(std::filesystem::exists(local + "/db/CURRENT"));
    auto state = (*backend)->register_state("s");
    (*backend)->put(state, 0, "k", "v");
    // An upload in flight keeps the instance: the directory goes after it.
    auto snapshot = (*backend)->snapshot(1);
    CHECK(std::filesystem::exists(local + "/chk-1"));
    backend->reset();
    CHECK(std::filesystem::exists(local));
    auto handles = upload(snapshot, made.dir() / "chk-1", made.dir() / "shared", "op");
    CHECK_FALSE(std::filesystem::exists(local + "/chk-1"));
    snapshot = nullptr;
    CHECK_FALSE(std::filesystem::exists(local));
  }

  options.local_dir.clear();
  auto backend = make_keyed_state_backend(options, {0, 3});
  REQUIRE(backend);
  auto* rocks = dynamic_cast<rocksdb_keyed_state_backend*>(backend->get());
  REQUIRE(rocks != nullptr);
  auto dir = std::filesystem::path(rocks->instance_dir()).parent_path();
  CHECK(dir.filename().string().starts_with("flint-rocksdb-"));
  CHECK(std::filesystem::exists(dir));
  backend->reset();
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE_TEMPLATE("many puts, removes and gets agree with a map, listings and snapshots in order",
                   B, hashmap_backend, rocksdb_full_backend) {
  // The heap backend answers get, put and remove from a hash index over its ordered map: both
  // must stay in step through inserts, overwrites and removes.
  backends made;
  auto backend = made.make<B>({0, 3});
  auto id = backend->register_state("s");
  std::map<std::pair<int, std::string>, std::string> reference;
  std::uint64_t x = 12345;
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  std::string value;
  for (int i = 0; i < 20'000; ++i) {
    int group = static_cast<int>(next() % 4);
    auto key = "k" + std::to_string(next() % 500);
    switch (next() % 3) {
      case 0: {
        auto v = std::to_string(i);
        backend->put(id, group, key, v);
        reference[{group, key}] = v;
        break;
      }
      case 1:
        backend->remove(id, group, key);
        reference.erase({group, key});
        break;
      default: {
        auto it = reference.find({group, key});
        REQUIRE(backend->get(id, group, key, value) == (it != reference.end()));
        if (it != reference.end())
          CHECK(value == it->second);
      }
    }
  }
  auto check_listing = [&](keyed_state_backend& b, std::uint32_t state) {
    for (int group = 0; group < 4; ++group) {
      std::vector<std::pair<std::string, std::string>> listed;
      b.for_each(state, group, "", [&](std::string_view k, std::string_view v) {
        listed.emplace_back(k, v);
      });
      std::vector<std::pair<std::string, std::string>> expected;
      for (auto it = reference.lower_bound({group, ""});
           it != reference.end() && it->first.first == group; ++it)
        expected.emplace_back(it->first.second, it->second);
      CHECK(listed == expected);
    }
  };
  check_listing(*backend, id);
  // A restore fills the index too.
  auto upload = backend->snapshot(1);
  auto handles = upload(snapshot_target{});
  REQUIRE(handles);
  auto restored = made.make<B>({0, 3});
  REQUIRE(restored->restore(*handles));
  auto rid = restored->register_state("s");
  check_listing(*restored, rid);
  for (const auto& [k, v] : reference) {
    REQUIRE(restored->get(rid, k.first, k.second, value));
    CHECK(value == v);
    restored->remove(rid, k.first, k.second);
    CHECK_FALSE(restored->get(rid, k.first, k.second, value));
  }
}

namespace {
/// Keeps one entry outside the backend and writes it into snapshots only.
struct outside_entry final : snapshot_participant {
  int begins = 0;
  int ends = 0;
  std::vector<std::int32_t> groups;
  void begin_snapshot() override { ++begins; }
  void write_key_group(std::int32_t key_group, key_group_entries_writer& writer) override {
    groups.push_back(key_group);
    if (key_group == 1) {
      writer.begin_state("s");
      writer.add("outside", "v");
    }
  }
  void end_snapshot() override { ++ends; }
};
} // namespace

TEST_CASE("the hashmap backend has its snapshot participants write into every key group") {
  backends made;
  auto backend = made.make<hashmap_backend>({0, 3});
  auto id = backend->register_state("s");
  backend->put(id, 1, "inside", "w");
  outside_entry p;
  REQUIRE(backend->add_snapshot_participant(&p));
  auto upload = backend->snapshot(1);
  CHECK(p.begins == 1);
  CHECK(p.ends == 1);
  CHECK(p.groups == std::vector<std::int32_t>{0, 1, 2, 3});
  std::string value;
  CHECK_FALSE(backend->get(id, 1, "outside", value));
  auto handles = upload(snapshot_target{});
  REQUIRE(handles);
  // Either backend restores the participant's entries beside the backend's own.
  for (bool rocks : {true, false}) {
    auto restored =
      rocks ? made.make<rocksdb_full_backend>({0, 3}) : made.make<hashmap_backend>({0, 3});
    REQUIRE(restored->restore(*handles));
    auto rid = restored->register_state("s");
    REQUIRE(restored->get(rid, 1, "outside", value));
    CHECK(value == "v");
    REQUIRE(restored->get(rid, 1, "inside", value));
    CHECK(value == "w");
  }
  // Removed participants are not called; the rocksdb backend takes none.
  backend->remove_snapshot_participant(&p);
  (void)backend->snapshot(2);
  CHECK(p.begins == 1);
  auto rocks = made.make<rocksdb_full_backend>({0, 3});
  CHECK_FALSE(rocks->add_snapshot_participant(&p));
}
