// The slicing window operator (one accumulator per key and slice) against the WindowOperator it
// replaces behind a LocalWindowAggregate (global_window_contents, one accumulator per key and
// window): the same partials in, the same results out at the same moments, the same late drops,
// over random keys, timestamps, watermarks and late records, tumbling and sliding windows (also
// size not a multiple of slide, offsets), allowed lateness 0 and > 0; through a snapshot and a
// restore at another parallelism in both backends; a savepoint of the per-window operator
// refused.

#include "../operator_test_harness.hpp"

#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/slicing_window_operator.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

namespace {

/// (auction-like key, partial sum) as the LocalWindowAggregate sends it.
using partial = std::pair<std::int64_t, std::int64_t>;
using sum_fn = std::int64_t (*)(const std::int64_t&, const std::int64_t&);
using local = reducing_contents<std::int64_t, sum_fn>;
using global = global_window_contents<std::int64_t, local>;

std::int64_t sum(const std::int64_t& a, const std::int64_t& b) { return a + b; }

/// A window's result with its key and bounds, and the timestamp it carried.
using row = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

/// Labels each result with its key and window (a function that is not the pass-through: the
/// operators clear its per-window state at each window's cleanup).
struct labelled final : internal_window_function<std::int64_t, row, std::int64_t, time_window> {
  const element_time* time = nullptr;
  void process(const std::int64_t& key, const time_window& w, window_context<time_window>& ctx,
               const std::int64_t& input, output<row>& out) override {
    (void)ctx;
    out.collect({key, w.start, w.end, input, time->timestamp});
  }
};

struct config {
  std::int64_t size;
  std::int64_t slide;
  std::int64_t offset;
  std::int64_t lateness;
};

std::shared_ptr<const window_assigner<time_window>> assigner_of(const config& c) {
  if (c.size == c.slide)
    return std::make_shared<tumbling_event_time_windows>(tumbling_event_time_windows::of(
      std::chrono::milliseconds(c.size), std::chrono::milliseconds(c.offset)));
  return std::make_shared<sliding_event_time_windows>(
    sliding_event_time_windows::of(std::chrono::milliseconds(c.size),
                                   std::chrono::milliseconds(c.slide),
                                   std::chrono::milliseconds(c.offset)));
}

/// An element (key, value at timestamp) or a watermark.
struct step {
  bool is_watermark = false;
  std::int64_t key = 0;
  std::int64_t value = 0;
  std::int64_t time = 0;
};

/// Random keys and timestamps around an advancing clock, up to `bound` out of order, a few
/// records far behind the watermark (late), watermarks now and then; starting at `start` (may be
/// negative).
std::vector<step> random_steps(std::uint64_t seed, int n, std::int64_t start, bool late) {
  std::mt19937_64 rng(seed);
  std::vector<step> out;
  std::int64_t t = start;
  std::int64_t watermark = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t bound = 40;
  for (int i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % 4);
    if (rng() % 200 == 0)
      t += 150;
    step s;
    s.key = static_cast<std::int64_t>(rng() % 23);
    s.value = static_cast<std::int64_t>(rng() % 100);
    s.time = t - static_cast<std::int64_t>(rng() % bound);
    if (late && rng() % 15 == 0)
      s.time = t - bound - static_cast<std::int64_t>(rng() % 250);
    out.push_back(s);
    if (rng() % 9 == 0) {
      watermark = std::max(watermark, t - bound - 1);
      out.push_back(step{true, 0, 0, watermark});
    }
  }
  return out;
}

using harness = test::operator_test_harness<partial, row>;

std::unique_ptr<one_input_operator<partial>> make_operator(bool sliced, const config& c,
                                                           operator_context& ctx,
                                                           std::unique_ptr<output<row>> out) {
  auto fn = std::make_unique<labelled>();
  fn->time = ctx.time;
  auto assigner = assigner_of(c);
  if (sliced)
    return std::make_unique<slicing_window_operator<std::int64_t, local, row>>(
      *sliced_windows::of(*assigner), c.lateness, local(&sum), std::move(fn), ctx,
      std::move(out));
  window_settings<partial, time_window> settings;
  settings.assigner = assigner;
  settings.allowed_lateness = c.lateness;
  return std::make_unique<window_operator<std::int64_t, global, row, time_window>>(
    settings, global(local(&sum)), std::move(fn), [](const partial& p) { return p.first; }, ctx,
    std::move(out));
}

std::vector<row> sorted(std::vector<test::stamped<row>> records) {
  std::vector<row> out;
  for (auto& r : records) {
    REQUIRE(r.timestamp.has_value());
    CHECK(*r.timestamp == std::get<4>(r.value));
    out.push_back(r.value);
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("the slicing window operator fires what the per-window operator fires, when it does") {
  const std::vector<config> configs = {
    {100, 100, 0, 0},  {100, 100, 30, 40}, {100, 20, 0, 0},  {100, 20, 7, 0},
    {100, 30, 0, 0},   {100, 30, -11, 25}, {90, 40, 5, 60},  {60, 60, -20, 100},
    {10, 1, 0, 3},     {70, 70, 0, 0},     {50, 15, 4, 200}, {100, 50, 0, 10},
  };
  std::uint64_t seed = 1;
  for (const auto& c : configs) {
    for (std::int64_t start : {1000, -5000}) {
      CAPTURE(c.size);
      CAPTURE(c.slide);
      CAPTURE(c.offset);
      CAPTURE(c.lateness);
      CAPTURE(start);
      harness plain;
      plain.open(make_operator(false, c, plain.context(), plain.make_output()));
      harness sliced;
      sliced.open(make_operator(true, c, sliced.context(), sliced.make_output()));
      auto steps = random_steps(seed++, 3000, start, true);
      std::size_t fired = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto& s = steps[i];
        CAPTURE(i);
        if (s.is_watermark) {
          plain.process_watermark(s.time);
          sliced.process_watermark(s.time);
        } else {
          plain.process_element({s.key, s.value}, s.time);
          sliced.process_element({s.key, s.value}, s.time);
        }
        auto want = sorted(plain.take_records());
        auto got = sorted(sliced.take_records());
        fired += want.size();
        REQUIRE(got == want);
      }
      plain.end_input();
      sliced.end_input();
      auto want = sorted(plain.take_records());
      CHECK(sorted(sliced.take_records()) == want);
      fired += want.size();
      CHECK(fired > 100);
      CHECK(plain.op().late_records_dropped() > 0);
      CHECK(sliced.op().late_records_dropped() == plain.op().late_records_dropped());
      CHECK(sliced.emitted().watermarks == plain.emitted().watermarks);
      auto& op = static_cast<slicing_window_operator<std::int64_t, local, row>&>(sliced.op());
      CHECK(op.num_slices().first == 0);
    }
  }
}

TEST_CASE("windows cut at the ends of the int64 range fire alike in both operators") {
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  const std::vector<config> configs = {{100, 100, 0, 0}, {100, 20, 0, 0}, {100, 20, 0, 50},
                                       {100, 100, 30, 10}, {90, 40, -7, 0}};
  for (const auto& c : configs) {
    for (std::int64_t t : {min + 1000, min + 150, min + 5, max - 1000, max - 150, max - 5, max}) {
      CAPTURE(c.size);
      CAPTURE(c.slide);
      CAPTURE(c.offset);
      CAPTURE(c.lateness);
      CAPTURE(t);
      harness plain;
      plain.open(make_operator(false, c, plain.context(), plain.make_output()));
      harness sliced;
      sliced.open(make_operator(true, c, sliced.context(), sliced.make_output()));
      for (std::int64_t key : {1, 2}) {
        // Key 1 at t, key 2 at t - 3 (one window earlier near INT64_MAX for tumbling windows).
        auto at = key == 1 ? t : t - 3;
        plain.process_element({key, 1}, at);
        sliced.process_element({key, 1}, at);
      }
      plain.end_input();
      sliced.end_input();
      auto want = sorted(plain.take_records());
      CHECK(sorted(sliced.take_records()) == want);
      CHECK(plain.op().late_records_dropped() == 0);
      CHECK(sliced.op().late_records_dropped() == 0);
      // Each record is in every window holding its timestamp, each window within the range.
      std::int64_t count = 0;
      for (const auto& r : want) {
        auto [key, start, end, n, timestamp] = r;
        auto at = key == 1 ? t : t - 3;
        CHECK(start < end);
        CHECK(start <= std::min(at, max - 1));
        CHECK(end > std::min(at, max - 1));
        CHECK(timestamp == end - 1);
        count += n;
      }
      // (The assigners' windows near the limits: window_assigners_test.)
      std::vector<time_window> windows;
      assigner_of(c)->append_windows(t, 0, windows);
      assigner_of(c)->append_windows(t - 3, 0, windows);
      CHECK(windows.size() >= 2);
      CHECK(count == static_cast<std::int64_t>(windows.size()));
    }
  }
}

TEST_CASE("a slice goes once the last window holding it is cleaned up") {
  for (std::int64_t lateness : {0, 25}) {
    CAPTURE(lateness);
    harness h;
    const config c{100, 20, 0, lateness};
    h.open(make_operator(true, c, h.context(), h.make_output()));
    auto& op = static_cast<slicing_window_operator<std::int64_t, local, row>&>(h.op());
    h.process_element({1, 5}, 10);   // slice [0, 20): windows [-80, 20) ... [0, 100)
    h.process_element({2, 1}, 15);
    h.process_element({1, 2}, 30);   // slice [20, 40)
    CHECK(op.num_slices() == std::pair<std::size_t, std::size_t>{2, 3});
    h.process_watermark(19);
    CHECK(h.take_records().size() == 2); // [-80, 20) for keys 1 and 2
    h.process_watermark(99 + lateness - 1);
    CHECK(op.num_slices().first == 2);
    h.process_watermark(99 + lateness);
    CHECK(op.num_slices() == std::pair<std::size_t, std::size_t>{1, 1});
    h.process_watermark(119 + lateness);
    CHECK(op.num_slices().first == 0);
    // Late for every window now: dropped and counted.
    h.process_element({1, 1}, 30);
    CHECK(op.late_records_dropped() == 1);
  }
}

namespace {

/// One subtask of either operator (hashmap or RocksDB), sending its results into `into`.
struct subtask {
  element_time time;
  std::unique_ptr<one_input_operator<partial>> op;
};

struct collect_rows final : output<row> {
  std::vector<row>* into = nullptr;
  void collect(row r) override { into->push_back(std::move(r)); }
};

std::unique_ptr<subtask> make_subtask(bool sliced, const config& c, int index, int parallelism,
                                      const std::string& backend,
                                      const std::filesystem::path& dir, std::vector<row>& into) {
  auto s = std::make_unique<subtask>();
  operator_context ctx;
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = state::key_group_range_for_operator(128, parallelism, index);
  ctx.time = &s->time;
  ctx.state_backend.type = backend;
  ctx.state_backend.local_dir =
    (dir / ("p" + std::to_string(parallelism) + "-" + std::to_string(index))).string();
  auto out = std::make_unique<collect_rows>();
  out->into = &into;
  s->op = make_operator(sliced, c, ctx, std::move(out));
  return s;
}

int owner(std::int64_t key, int parallelism) {
  return operator_index_for_key_group(128, parallelism, assign_to_key_group(key_hash(key), 128));
}

void feed(std::vector<std::unique_ptr<subtask>>& subtasks, const std::vector<step>& steps,
          std::size_t from, std::size_t to) {
  const int p = static_cast<int>(subtasks.size());
  for (std::size_t i = from; i < to; ++i) {
    const auto& s = steps[i];
    if (s.is_watermark) {
      for (auto& sub : subtasks)
        sub->op->process_watermark(s.time);
      continue;
    }
    auto& sub = *subtasks[static_cast<std::size_t>(owner(s.key, p))];
    sub.time.set(s.time);
    sub.op->process_element({s.key, s.value});
  }
}

struct run_result {
  std::vector<row> rows;
  std::int64_t dropped = 0;
};

/// One stretch of a run: `parallelism` subtasks of one kind on `backend`, restored from the
/// previous stretch's snapshot, fed the steps up to `until`, then snapshot (or, the last,
/// ended by the final watermark).
struct stage {
  bool sliced;
  int parallelism;
  std::string backend;
  std::size_t until;
};

run_result run_stages(const config& c, const std::vector<step>& steps,
                      const std::vector<stage>& stages) {
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_slicing_restore_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  run_result result;
  std::vector<state::keyed_state_handle> handles;
  std::size_t from = 0;
  for (std::size_t n = 0; n < stages.size(); ++n) {
    const auto& st = stages[n];
    const bool last = n + 1 == stages.size();
    std::vector<std::unique_ptr<subtask>> subtasks;
    for (int i = 0; i < st.parallelism; ++i) {
      subtasks.push_back(make_subtask(st.sliced, c, i, st.parallelism, st.backend,
                                      dir / ("s" + std::to_string(n)), result.rows));
      if (n > 0)
        subtasks.back()->op->initialize_state(state::operator_state_restore(
          state::operator_subtask_state{{}, handles, {}}, false, true));
      subtasks.back()->op->open();
    }
    const auto until = last ? steps.size() : st.until;
    feed(subtasks, steps, from, until);
    from = until;
    handles.clear();
    for (int i = 0; i < st.parallelism; ++i) {
      auto& s = *subtasks[static_cast<std::size_t>(i)];
      if (last) {
        s.op->process_watermark(max_watermark);
      } else {
        auto snap = s.op->snapshot_state(static_cast<std::int64_t>(n + 1));
        REQUIRE(snap.keyed_upload);
        auto up = snap.keyed_upload(state::snapshot_target{
          (dir / ("chk-" + std::to_string(n + 1))).string(), "", "w-" + std::to_string(i)});
        REQUIRE_MESSAGE(up.has_value(), up.error().to_string());
        handles.insert(handles.end(), up->begin(), up->end());
      }
      result.dropped += s.op->late_records_dropped();
    }
  }
  std::sort(result.rows.begin(), result.rows.end());
  std::filesystem::remove_all(dir);
  return result;
}

/// Runs `steps` on `from_p` subtasks, snapshots them after `cut` steps, restores `to_p`
/// subtasks (on `restore_backend`; of the other kind when `sliced_after` says so) and runs the
/// rest; or uninterrupted on one subtask when `cut` is 0.
run_result run(bool sliced, const config& c, const std::vector<step>& steps, std::size_t cut,
               const std::string& backend, int from_p, int to_p,
               const std::string& restore_backend, std::optional<bool> sliced_after = {}) {
  if (cut == 0)
    return run_stages(c, steps, {{sliced, from_p, backend, 0}});
  return run_stages(c, steps, {{sliced, from_p, backend, cut},
                               {sliced_after.value_or(sliced), to_p, restore_backend, 0}});
}

} // namespace

TEST_CASE("the slicing window operator restores mid-stream at another parallelism, either backend") {
  const std::vector<config> configs = {{100, 20, 0, 0}, {90, 40, 5, 60}, {100, 100, 30, 0}};
  std::uint64_t seed = 100;
  for (const auto& c : configs) {
    for (bool late : {false, true}) {
      auto steps = random_steps(seed++, 2000, 1000, late);
      const auto uninterrupted = run(false, c, steps, 0, "hashmap", 1, 1, "hashmap");
      CHECK(uninterrupted.rows.size() > 100);
      for (const std::string backend : {"hashmap", "rocksdb"}) {
        for (auto [from_p, to_p] : {std::pair{2, 3}, std::pair{3, 2}, std::pair{1, 1}}) {
          CAPTURE(c.size);
          CAPTURE(c.slide);
          CAPTURE(c.lateness);
          CAPTURE(late);
          CAPTURE(backend);
          CAPTURE(from_p);
          CAPTURE(to_p);
          const auto cut = steps.size() / 2;
          auto want = run(false, c, steps, cut, backend, from_p, to_p, backend);
          auto got = run(true, c, steps, cut, backend, from_p, to_p, backend);
          CHECK(got.rows == want.rows);
          CHECK(got.dropped == want.dropped);
          if (!late) {
            // In bound: a restore changes nothing.
            CHECK(got.rows == uninterrupted.rows);
            CHECK(got.dropped == 0);
          }
        }
      }
      // Across backends.
      auto want = run(false, c, steps, steps.size() / 3, "hashmap", 2, 3, "rocksdb");
      auto got = run(true, c, steps, steps.size() / 3, "hashmap", 2, 3, "rocksdb");
      CHECK(got.rows == want.rows);
      got = run(true, c, steps, steps.size() / 3, "rocksdb", 3, 2, "hashmap");
      want = run(false, c, steps, steps.size() / 3, "rocksdb", 3, 2, "hashmap");
      CHECK(got.rows == want.rows);
    }
  }
}

TEST_CASE("a savepoint of the per-window operator restores into the slicing one") {
  // Its windows keep their own accumulators and timers ("window-contents", "window-timers")
  // until they are cleaned up; what comes after the restore goes into slices.
  const std::vector<config> configs = {{100, 20, 0, 0}, {90, 40, 5, 60}, {100, 100, 30, 20}};
  std::uint64_t seed = 300;
  for (const auto& c : configs) {
    for (bool late : {false, true}) {
      auto steps = random_steps(seed++, 2000, 1000, late);
      for (const std::string backend : {"hashmap", "rocksdb"}) {
        for (auto [from_p, to_p] : {std::pair{2, 3}, std::pair{1, 1}}) {
          CAPTURE(c.size);
          CAPTURE(c.slide);
          CAPTURE(c.lateness);
          CAPTURE(late);
          CAPTURE(backend);
          CAPTURE(from_p);
          CAPTURE(to_p);
          const auto cut = steps.size() / 2;
          auto want = run(false, c, steps, cut, backend, from_p, to_p, backend);
          auto got = run(false, c, steps, cut, backend, from_p, to_p, backend, true);
          CHECK(got.rows == want.rows);
          CHECK(got.dropped == want.dropped);
          // The slicing operator's own snapshot of such windows, restored once more.
          const auto third = steps.size() / 3;
          auto twice = run_stages(c, steps, {{false, from_p, backend, third},
                                             {true, to_p, backend, third + 150},
                                             {true, from_p, backend, 0}});
          auto plain = run_stages(c, steps, {{false, from_p, backend, third},
                                             {false, to_p, backend, third + 150},
                                             {false, from_p, backend, 0}});
          CHECK(twice.rows == plain.rows);
          CHECK(twice.dropped == plain.dropped);
        }
      }
    }
  }
}

TEST_CASE("a savepoint of the slicing operator is refused by the per-window one, not dropped") {
  for (const std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    auto dir = std::filesystem::temp_directory_path()
      / ("flint_slicing_to_plain_" + std::to_string(::getpid()) + "_" + backend);
    std::filesystem::remove_all(dir);
    const config c{100, 20, 0, 0};
    std::vector<row> rows;
    std::vector<state::keyed_state_handle> handles;
    {
      auto sliced = make_subtask(true, c, 0, 1, backend, dir / "a", rows);
      sliced->op->open();
      sliced->time.set(50);
      sliced->op->process_element({7, 1});
      auto snap = sliced->op->snapshot_state(1);
      auto up = snap.keyed_upload(state::snapshot_target{(dir / "chk").string(), "", "w"});
      REQUIRE(up.has_value());
      handles = *up;
    }
    auto plain = make_subtask(false, c, 0, 1, backend, dir / "b", rows);
    CHECK_THROWS_WITH_AS(plain->op->initialize_state(state::operator_state_restore(
                           state::operator_subtask_state{{}, handles, {}}, false, true)),
                         doctest::Contains("agg-phase-strategy AUTO or TWO_PHASE"),
                         std::runtime_error);
    plain.reset();
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("after a restore a window that fired and is kept for its lateness fires again for a new "
          "element (EventTimeTrigger registers its timer again), in both operators") {
  for (bool sliced : {false, true}) {
    for (const std::string backend : {"hashmap", "rocksdb"}) {
      CAPTURE(sliced);
      CAPTURE(backend);
      auto dir = std::filesystem::temp_directory_path()
        / ("flint_slicing_refire_" + std::to_string(::getpid()) + "_" + backend);
      std::filesystem::remove_all(dir);
      const config c{100, 100, 0, 50};
      std::vector<row> rows;
      std::vector<state::keyed_state_handle> handles;
      {
        auto before = make_subtask(sliced, c, 0, 1, backend, dir / "a", rows);
        before->op->open();
        before->time.set(10);
        before->op->process_element({1, 5});
        before->op->process_watermark(120); // [0, 100) fires, kept until 149
        REQUIRE(rows == std::vector<row>{{1, 0, 100, 5, 99}});
        auto snap = before->op->snapshot_state(1);
        auto up = snap.keyed_upload(state::snapshot_target{(dir / "chk").string(), "", "w"});
        REQUIRE(up.has_value());
        handles = *up;
      }
      rows.clear();
      auto after = make_subtask(sliced, c, 0, 1, backend, dir / "b", rows);
      after->op->initialize_state(state::operator_state_restore(
        state::operator_subtask_state{{}, handles, {}}, false, true));
      after->op->open();
      after->time.set(20);
      after->op->process_element({1, 2});
      CHECK(rows.empty());
      after->op->process_watermark(130);
      CHECK(rows == std::vector<row>{{1, 0, 100, 7, 99}});
      after->op->process_watermark(200);
      CHECK(rows.size() == 1);
      after.reset();
      std::filesystem::remove_all(dir);
    }
  }
}
