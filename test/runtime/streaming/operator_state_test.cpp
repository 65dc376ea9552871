// Operators' checkpointed state without a cluster: what each snapshots at a barrier, and that a
// restored operator goes on exactly where the snapshot was taken — the sources' positions (also
// dealt out to another parallelism), the keyed reduce's values per key group, and the file
// sink's two-phase commit.

#include "runtime/state/keyed_state_files.hpp"
#include "runtime/streaming/file_sink.hpp"
#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operators.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::streaming;

namespace {

template <class T>
struct vector_output : output<T> {
  std::vector<T> values;
  void collect(T value) override { values.push_back(std::move(value)); }
};

/// The snapshot as a restore sees it (keyed state inline, as without a checkpoint directory).
state::operator_state_restore restore_of(const std::vector<state::operator_snapshot>& snapshots,
                                         std::vector<std::vector<char>> entries = {}) {
  state::operator_subtask_state s;
  for (const auto& snap : snapshots) {
    if (!snap.key_groups.empty()) {
      auto handle = state::write_keyed_state("", snap.first_key_group, snap.key_groups);
      REQUIRE(handle.has_value());
      s.keyed.push_back(*handle);
    }
    for (const auto& e : snap.list_entries)
      entries.push_back(e);
  }
  s.list_entries = std::move(entries);
  return state::operator_state_restore(std::move(s), false, true);
}

operator_context context(int subtask, int parallelism, int max_parallelism = 128) {
  operator_context ctx;
  ctx.subtask_index = subtask;
  ctx.parallelism = parallelism;
  ctx.key_group_max_parallelism = max_parallelism;
  ctx.key_groups = key_group_range_for_operator(max_parallelism, parallelism, subtask);
  return ctx;
}

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_state_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Visible (committed) files of a sink directory, concatenated in name order.
std::vector<std::string> committed_lines(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string()[0] != '.')
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> lines;
  for (const auto& f : files) {
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
  }
  return lines;
}

std::size_t hidden_files(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string()[0] == '.' ? 1 : 0;
  return n;
}

} // namespace

TEST_CASE("a text file source restored from its snapshot emits exactly the lines after it") {
  auto dir = temp_dir("text_source");
  auto path = dir / "input.txt";
  std::vector<std::string> lines;
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 500; ++i) {
      lines.push_back("line " + std::to_string(i)
                      + std::string(static_cast<std::size_t>(i % 13), 'x'));
      f << lines.back() << "\n";
    }
  }
  for (int p : {1, 2, 3}) {
    for (int restored_p : {p, p + 1, std::max(1, p - 1)}) {
      std::vector<std::string> all;
      std::vector<state::operator_snapshot> snapshots;
      for (int i = 0; i < p; ++i) {
        auto out = std::make_unique<vector_output<std::string>>();
        auto* seen = out.get();
        text_file_source source(path.string(), context(i, p), std::move(out));
        source.open();
        source.emit_next(37 + static_cast<std::size_t>(i)); // part of the split, then the barrier
        snapshots.push_back(source.snapshot_state(1));
        all.insert(all.end(), seen->values.begin(), seen->values.end());
      }
      // The entries of every old subtask, dealt round robin as the JobMaster does on rescaling.
      std::vector<std::vector<char>> entries;
      for (const auto& s : snapshots)
        entries.insert(entries.end(), s.list_entries.begin(), s.list_entries.end());
      for (int i = 0; i < restored_p; ++i) {
        std::vector<std::vector<char>> mine;
        for (std::size_t k = 0; k < entries.size(); ++k)
          if (static_cast<int>(k % static_cast<std::size_t>(restored_p)) == i)
            mine.push_back(entries[k]);
        auto out = std::make_unique<vector_output<std::string>>();
        auto* seen = out.get();
        text_file_source source(path.string(), context(i, restored_p), std::move(out));
        source.initialize_state(state::operator_state_restore(
          state::operator_subtask_state{{}, {}, std::move(mine)}, false, true));
        source.open();
        while (source.emit_next(100) != source_status::end_of_input) {
        }
        all.insert(all.end(), seen->values.begin(), seen->values.end());
      }
      std::sort(all.begin(), all.end());
      auto expected = lines;
      std::sort(expected.begin(), expected.end());
      CHECK_MESSAGE(all == expected, "parallelism " << p << " restored at " << restored_p);
    }
  }
  // A drained source says so: restored, it emits nothing.
  auto out = std::make_unique<vector_output<std::string>>();
  text_file_source drained(path.string(), context(0, 1), std::move(out));
  drained.open();
  while (drained.emit_next(1000) != source_status::end_of_input) {
  }
  auto snapshot = drained.snapshot_state(2);
  auto again_out = std::make_unique<vector_output<std::string>>();
  auto* again_seen = again_out.get();
  text_file_source again(path.string(), context(0, 1), std::move(again_out));
  again.initialize_state(restore_of({snapshot}));
  again.open();
  CHECK(again.emit_next(1000) == source_status::end_of_input);
  CHECK(again_seen->values.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("sequence and collection sources resume at their positions") {
  std::vector<std::int64_t> all;
  std::vector<state::operator_snapshot> snapshots;
  for (int i = 0; i < 2; ++i) {
    auto out = std::make_unique<vector_output<std::int64_t>>();
    auto* seen = out.get();
    sequence_source source(1, 100, context(i, 2), std::move(out));
    source.emit_next(7);
    snapshots.push_back(source.snapshot_state(1));
    all.insert(all.end(), seen->values.begin(), seen->values.end());
  }
  auto out = std::make_unique<vector_output<std::int64_t>>();
  auto* seen = out.get();
  sequence_source restored(1, 100, context(0, 1), std::move(out));
  restored.initialize_state(restore_of(snapshots));
  while (restored.emit_next(10) != source_status::end_of_input) {
  }
  all.insert(all.end(), seen->values.begin(), seen->values.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> expected(100);
  for (int i = 0; i < 100; ++i)
    expected[static_cast<std::size_t>(i)] = i + 1;
  CHECK(all == expected);

  std::vector<std::string> elements{"a", "b", "c", "d", "e"};
  auto first_out = std::make_unique<vector_output<std::string>>();
  auto* first_seen = first_out.get();
  collection_source<std::string> first(elements, context(0, 1), std::move(first_out));
  first.emit_next(2);
  auto snapshot = first.snapshot_state(1);
  auto second_out = std::make_unique<vector_output<std::string>>();
  auto* second_seen = second_out.get();
  collection_source<std::string> second(elements, context(0, 1), std::move(second_out));
  second.initialize_state(restore_of({snapshot}));
  while (second.emit_next(10) != source_status::end_of_input) {
  }
  CHECK(first_seen->values == std::vector<std::string>{"a", "b"});
  CHECK(second_seen->values == std::vector<std::string>{"c", "d", "e"});
}

TEST_CASE("the keyed reduce snapshots each key group and resumes its counts, also rescaled") {
  using record = std::tuple<std::string, std::int64_t>;
  auto sum = [](const record& a, const record& b) {
    return record{std::get<0>(a), std::get<1>(a) + std::get<1>(b)};
  };
  auto key = [](const record& r) { return std::get<0>(r); };
  std::vector<std::string> words;
  for (int i = 0; i < 300; ++i)
    words.push_back("w" + std::to_string(i % 97));
  auto group_of = [](const std::string& w, int p) {
    return operator_index_for_key_group(128, p, assign_to_key_group(key_hash(w), 128));
  };
  // Two subtasks count the first half and snapshot.
  std::vector<state::operator_snapshot> snapshots;
  for (int i = 0; i < 2; ++i) {
    auto out = std::make_unique<vector_output<record>>();
    keyed_reduce_operator<record, std::string> op(sum, key, context(i, 2), std::move(out));
    for (std::size_t w = 0; w < 150; ++w)
      if (group_of(words[w], 2) == i)
        op.process_element({words[w], 1});
    auto s = op.snapshot_state(1);
    CHECK(s.first_key_group == key_group_range_for_operator(128, 2, i).first);
    CHECK(s.key_groups.size() == 64);
    snapshots.push_back(std::move(s));
  }
  // Three subtasks restore from both snapshots and count the rest: every final count is right.
  std::map<std::string, std::int64_t> last;
  for (int i = 0; i < 3; ++i) {
    auto out = std::make_unique<vector_output<record>>();
    auto* seen = out.get();
    keyed_reduce_operator<record, std::string> op(sum, key, context(i, 3), std::move(out));
    op.initialize_state(restore_of(snapshots));
    for (std::size_t w = 150; w < words.size(); ++w)
      if (group_of(words[w], 3) == i)
        op.process_element({words[w], 1});
    for (const auto& r : seen->values)
      last[std::get<0>(r)] = std::get<1>(r);
  }
  std::map<std::string, std::int64_t> expected;
  for (const auto& w : words)
    ++expected[w];
  for (const auto& [w, n] : last)
    CHECK_MESSAGE(expected[w] == n, w);
}

TEST_CASE("on RocksDB the keyed reduce keeps its values there, snapshots and restores them") {
  using record = std::tuple<std::string, std::int64_t>;
  auto sum = [](const record& a, const record& b) {
    return record{std::get<0>(a), std::get<1>(a) + std::get<1>(b)};
  };
  auto key = [](const record& r) { return std::get<0>(r); };
  auto dir = temp_dir("rocksdb_reduce");
  auto rocks = [&](int subtask, int parallelism, const std::string& name) {
    auto ctx = context(subtask, parallelism);
    ctx.state_backend.type = "rocksdb";
    ctx.state_backend.local_dir = (dir / name).string();
    return ctx;
  };
  std::vector<state::keyed_state_handle> handles;
  for (int i = 0; i < 2; ++i) {
    auto out = std::make_unique<vector_output<record>>();
    keyed_reduce_operator<record, std::string> op(sum, key, rocks(i, 2, "a" + std::to_string(i)),
                                                  std::move(out));
    op.open();
    for (int w = 0; w < 200; ++w) {
      auto word = "w" + std::to_string(w % 50);
      if (operator_index_for_key_group(128, 2, assign_to_key_group(key_hash(word), 128)) == i)
        op.process_element({word, 1});
    }
    auto s = op.snapshot_state(1);
    REQUIRE(s.keyed_upload);
    auto uploaded = s.keyed_upload(
      state::snapshot_target{(dir / "chk-1").string(), "", "op-" + std::to_string(i)});
    REQUIRE_MESSAGE(uploaded.has_value(), uploaded.error().to_string());
    handles.insert(handles.end(), uploaded->begin(), uploaded->end());
  }
  // One subtask restores both halves and counts on.
  auto out = std::make_unique<vector_output<record>>();
  auto* seen = out.get();
  keyed_reduce_operator<record, std::string> op(sum, key, rocks(0, 1, "b"), std::move(out));
  op.initialize_state(
    state::operator_state_restore(state::operator_subtask_state{{}, handles, {}}, false, true));
  op.open();
  op.process_element({"w7", 1});
  REQUIRE(seen->values.size() == 1);
  CHECK(std::get<1>(seen->values[0]) == 5); // four before the checkpoint, one after
  std::filesystem::remove_all(dir);
}

TEST_CASE("the file sink commits a checkpoint's part files only when it completes") {
  auto dir = temp_dir("file_sink");
  auto ctx = context(0, 1);
  ctx.checkpointing = graph::checkpointing_mode::exactly_once;
  file_sink<std::string> sink(dir.string(), ctx);
  sink.open();
  CHECK_FALSE(sink.awaits_commit());
  sink.process_element("a");
  sink.process_element("b");
  CHECK(sink.awaits_commit());
  auto first = sink.snapshot_state(1);
  REQUIRE(first.list_entries.size() == 1); // one entry per writer
  CHECK(file_sink_detail::decode(first.list_entries[0]).pending.size() == 1);
  sink.process_element("c");
  auto second = sink.snapshot_state(2);
  REQUIRE(second.list_entries.size() == 1);
  CHECK(file_sink_detail::decode(second.list_entries[0]).pending.size() == 2); // 1 still pending
  sink.process_element("d");
  CHECK(committed_lines(dir).empty()); // in progress and pending files are hidden
  sink.notify_checkpoint_complete(1);
  CHECK(committed_lines(dir) == std::vector<std::string>{"a", "b"});
  sink.close(); // the attempt fails here: "c" pending for 2, "d" in progress

  SUBCASE("a restore from checkpoint 2 commits its pending file and drops what came after") {
    file_sink<std::string> restored(dir.string(), ctx);
    restored.initialize_state(restore_of({second}));
    restored.open();
    CHECK(committed_lines(dir) == std::vector<std::string>{"a", "b", "c"});
    CHECK(hidden_files(dir) == 0); // "d" is replayed by the sources, its file went
  }
  SUBCASE("a restore from checkpoint 1 finds its file committed already and drops the rest") {
    file_sink<std::string> restored(dir.string(), ctx);
    restored.initialize_state(restore_of({first}));
    restored.open();
    CHECK(committed_lines(dir) == std::vector<std::string>{"a", "b"});
    CHECK(hidden_files(dir) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the file sink's commits are synced by the next checkpoint's asynchronous part, or at "
          "once after its input ended") {
  auto dir = temp_dir("file_sink_sync");
  auto ctx = context(0, 1);
  ctx.checkpointing = graph::checkpointing_mode::exactly_once;
  file_sink<std::string> sink(dir.string(), ctx);
  sink.open();
  sink.process_element("a");
  auto first = sink.snapshot_state(1);
  REQUIRE(first.before_acknowledge); // the part file
  REQUIRE(first.before_acknowledge());
  sink.notify_checkpoint_complete(1); // renamed; the directory is not synced on the task's thread
  CHECK(committed_lines(dir) == std::vector<std::string>{"a"});
  // No new records, but checkpoint 2 no longer lists "a": its asynchronous part syncs the rename.
  auto second = sink.snapshot_state(2);
  REQUIRE(second.before_acknowledge);
  CHECK(file_sink_detail::decode(second.list_entries[0]).pending.empty());
  // Until checkpoint 2 completes, every checkpoint syncs it again (2 may still fail).
  auto third = sink.snapshot_state(3);
  REQUIRE(third.before_acknowledge);
  REQUIRE(second.before_acknowledge());
  sink.notify_checkpoint_complete(2);
  CHECK_FALSE(sink.snapshot_state(4).before_acknowledge); // nothing new to make durable

  SUBCASE("a directory that cannot be synced fails the checkpoint, naming it") {
    sink.process_element("b");
    (void)sink.snapshot_state(5);
    sink.notify_checkpoint_complete(5);
    auto sixth = sink.snapshot_state(6);
    REQUIRE(sixth.before_acknowledge);
    std::filesystem::remove_all(dir);
    auto failed = sixth.before_acknowledge();
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message.find("Cannot sync directory " + dir.string())
          != std::string::npos);
  }
  SUBCASE("after the input ended the last commit is synced at once: no checkpoint follows") {
    sink.process_element("b");
    sink.finish();
    auto last = sink.snapshot_state(5);
    REQUIRE(last.before_acknowledge());
    sink.notify_checkpoint_complete(5);
    CHECK(committed_lines(dir) == std::vector<std::string>{"a", "b"});
    CHECK_FALSE(sink.snapshot_state(6).before_acknowledge);
  }
  sink.close();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a restored file sink removes only its own writers' files") {
  auto dir = temp_dir("file_sink_foreign");
  // What others keep in the same directory: a user's file, a hidden one, and another job's
  // sink of the same subtask index with a file in progress.
  { std::ofstream(dir / "notes.txt") << "mine\n"; }
  { std::ofstream(dir / ".hidden") << "mine\n"; }
  auto ctx = context(0, 1);
  ctx.checkpointing = graph::checkpointing_mode::exactly_once;
  file_sink<std::string> other(dir.string(), ctx);
  other.open();
  other.process_element("other job");
  other.snapshot_state(7); // pending in the other job, not committed yet

  file_sink<std::string> sink(dir.string(), ctx);
  sink.open();
  sink.process_element("a");
  auto first = sink.snapshot_state(1);
  sink.process_element("b"); // after the checkpoint: replayed after the restore
  sink.close();

  file_sink<std::string> restored(dir.string(), ctx);
  restored.initialize_state(restore_of({first}));
  restored.open();
  CHECK(std::filesystem::exists(dir / "notes.txt"));
  CHECK(std::filesystem::exists(dir / ".hidden"));
  other.notify_checkpoint_complete(7); // the other job's file was left for it to commit
  auto lines = committed_lines(dir);
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"a", "mine", "other job"});
  CHECK(hidden_files(dir) == 1); // .hidden; "b"'s in-progress file went
  std::filesystem::remove_all(dir);
}

namespace {

/// `parallelism` sink subtasks, each with a committed line, a line pending for checkpoint 2 and
/// one in progress after it; returns checkpoint 2's entries of every subtask.
std::vector<std::vector<std::vector<char>>> sinks_with_pending_files(
  const std::filesystem::path& dir, int parallelism) {
  std::vector<std::vector<std::vector<char>>> entries;
  for (int i = 0; i < parallelism; ++i) {
    auto ctx = context(i, parallelism);
    ctx.checkpointing = graph::checkpointing_mode::exactly_once;
    file_sink<std::string> sink(dir.string(), ctx);
    sink.open();
    sink.process_element("committed " + std::to_string(i));
    sink.snapshot_state(1);
    sink.notify_checkpoint_complete(1);
    sink.process_element("pending " + std::to_string(i));
    entries.push_back(sink.snapshot_state(2).list_entries);
    sink.process_element("replayed " + std::to_string(i));
    sink.snapshot_state(3); // never completes: the job fails now
    sink.close();
  }
  return entries;
}

/// Restores checkpoint 2 at `parallelism`, handing out the entries round robin as the JobMaster
/// does at a changed parallelism (state_assignment).
void restore_sinks(const std::filesystem::path& dir,
                   const std::vector<std::vector<std::vector<char>>>& entries, int parallelism) {
  std::vector<std::vector<std::vector<char>>> assigned(static_cast<std::size_t>(parallelism));
  std::size_t k = 0;
  for (const auto& subtask : entries)
    for (const auto& e : subtask)
      assigned[k++ % static_cast<std::size_t>(parallelism)].push_back(e);
  for (int i = 0; i < parallelism; ++i) {
    auto ctx = context(i, parallelism);
    ctx.checkpointing = graph::checkpointing_mode::exactly_once;
    file_sink<std::string> sink(dir.string(), ctx);
    sink.initialize_state(restore_of({}, assigned[static_cast<std::size_t>(i)]));
    sink.open();
  }
}

} // namespace

TEST_CASE("a rescaled file sink commits every pending file once and leaves no file in progress") {
  for (auto [from, to] : {std::pair{4, 2}, std::pair{2, 3}, std::pair{3, 3}}) {
    CAPTURE(from);
    CAPTURE(to);
    auto dir = temp_dir("file_sink_rescale");
    { std::ofstream(dir / ".user-file.inprogress") << "mine\n"; }
    auto entries = sinks_with_pending_files(dir, from);
    restore_sinks(dir, entries, to);
    std::vector<std::string> expected;
    for (int i = 0; i < from; ++i) {
      expected.push_back("committed " + std::to_string(i));
      expected.push_back("pending " + std::to_string(i));
    }
    auto lines = committed_lines(dir);
    std::sort(lines.begin(), lines.end());
    std::sort(expected.begin(), expected.end());
    CHECK(lines == expected);
    CHECK(hidden_files(dir) == 1); // the user's file only
    // A second restore of the same checkpoint (the first restored attempt failed at once)
    // finds everything committed already.
    restore_sinks(dir, entries, to);
    lines = committed_lines(dir);
    std::sort(lines.begin(), lines.end());
    CHECK(lines == expected);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("a pending part file missing at commit is an error naming it") {
  auto dir = temp_dir("file_sink_missing");
  auto ctx = context(0, 1);
  file_sink<std::string> sink(dir.string(), ctx);
  sink.open();
  sink.process_element("a");
  auto s = sink.snapshot_state(1);
  for (const auto& e : std::filesystem::directory_iterator(dir))
    std::filesystem::remove(e.path());
  CHECK_THROWS_WITH_AS(sink.notify_checkpoint_complete(1),
                       doctest::Contains("Cannot commit part file"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

namespace {

/// Per key: how many (value state), the last three values (list state), how many odd and even
/// (map state); emits "key count last odd even".
struct summary_function
  : keyed_process_function<std::string, std::tuple<std::string, std::int64_t>, std::string> {
  std::optional<value_state<std::int64_t>> count;
  std::optional<list_state<std::int64_t>> last;
  std::optional<map_state<std::string, std::int64_t>> parity;

  void open(keyed_context<std::string>& ctx) override {
    count.emplace(ctx.get_state<std::int64_t>("count"));
    last.emplace(ctx.get_list_state<std::int64_t>("last"));
    parity.emplace(ctx.get_map_state<std::string, std::int64_t>("parity"));
  }
  void process_element(const std::tuple<std::string, std::int64_t>& r,
                       keyed_context<std::string>& ctx, output<std::string>& out) override {
    auto n = count->value().value_or(0) + 1;
    count->update(n);
    auto values = last->get();
    values.push_back(std::get<1>(r));
    if (values.size() > 3)
      values.erase(values.begin());
    last->update(values);
    auto side = std::get<1>(r) % 2 == 0 ? "even" : "odd";
    parity->put(side, parity->get(side).value_or(0) + 1);
    out.collect(ctx.current_key() + " " + std::to_string(n) + " " + std::to_string(values.back())
                + " " + std::to_string(parity->get("odd").value_or(0)) + " "
                + std::to_string(parity->get("even").value_or(0)));
  }
};

} // namespace

TEST_CASE("a keyed process function's value, list and map states survive a rescaled restore") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    using record = std::tuple<std::string, std::int64_t>;
    auto dir = temp_dir("keyed_process_" + backend);
    auto key = [](const record& r) { return std::get<0>(r); };
    auto ctx_of = [&](int subtask, int parallelism, const std::string& name) {
      auto ctx = context(subtask, parallelism);
      ctx.state_backend.type = backend;
      ctx.state_backend.local_dir = (dir / name).string();
      return ctx;
    };
    auto owner = [](const std::string& k, int p) {
      return operator_index_for_key_group(128, p, assign_to_key_group(key_hash(k), 128));
    };
    std::vector<state::keyed_state_handle> handles;
    for (int i = 0; i < 2; ++i) {
      auto out = std::make_unique<vector_output<std::string>>();
      keyed_process_operator<std::string, record, std::string> op(
        std::make_unique<summary_function>(), key, ctx_of(i, 2, "a" + std::to_string(i)),
        std::move(out));
      op.open();
      for (std::int64_t v = 1; v <= 20; ++v) {
        auto k = "k" + std::to_string(v % 4);
        if (owner(k, 2) == i)
          op.process_element({k, v});
      }
      auto s = op.snapshot_state(1);
      REQUIRE(s.keyed_upload);
      auto up = s.keyed_upload(
        state::snapshot_target{(dir / "chk-1").string(), "", "op-" + std::to_string(i)});
      REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
      handles.insert(handles.end(), up->begin(), up->end());
    }
    // Three subtasks restore; k1 got 1,5,9,13,17 (five, all odd); one more even value.
    for (int i = 0; i < 3; ++i) {
      if (owner("k1", 3) != i)
        continue;
      auto out = std::make_unique<vector_output<std::string>>();
      auto* seen = out.get();
      keyed_process_operator<std::string, record, std::string> op(
        std::make_unique<summary_function>(), key, ctx_of(i, 3, "b"), std::move(out));
      op.initialize_state(
        state::operator_state_restore(state::operator_subtask_state{{}, handles, {}}, false, true));
      op.open();
      op.process_element({"k1", 22});
      REQUIRE(seen->values.size() == 1);
      CHECK(seen->values[0] == "k1 6 22 5 1");
    }
    std::filesystem::remove_all(dir);
  }
}
