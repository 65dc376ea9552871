// The data generator source (Flink's DataGeneratorSource) driven by hand, as its task would:
// steps of emit_next, processing time moved by the test, snapshots and restores at another
// parallelism. Then a job: from_source with per-split watermarks into tumbling windows on a
// MiniCluster, equal to a count over the generated input.

#include "api/data_generator_source.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

namespace {

/// One source subtask with a manual clock: what it emitted (values with timestamps), its
/// watermarks and status changes, and how often it asked to be woken.
struct source_fixture {
  struct captured final : output<std::int64_t> {
    explicit captured(source_fixture& f) : f_(f) {}
    void collect(std::int64_t v) override {
      f_.values.push_back(v);
      f_.timestamps.push_back(f_.time.has_timestamp ? std::optional(f_.time.timestamp)
                                                    : std::nullopt);
    }
    source_fixture& f_;
  };
  struct forwarder final : watermark_forwarder {
    explicit forwarder(source_fixture& f) : f_(f) {}
    void emit_watermark(std::int64_t w) override { f_.watermarks.push_back(w); }
    void emit_watermark_status(bool idle) override { f_.statuses.push_back(idle); }
    source_fixture& f_;
  };

  source_fixture(int subtask, int parallelism) : clock([this] { return now; }), fwd(*this) {
    ctx.operator_name = "generator";
    ctx.subtask_index = subtask;
    ctx.parallelism = parallelism;
    ctx.time = &time;
    ctx.processing_time = &clock;
    ctx.auto_watermark_interval = 200;
    ctx.wake = [this] { ++wakes; };
  }

  /// A source of `generator` over [0, count) with `strategy` (none: no timestamps).
  void make(std::function<std::int64_t(std::int64_t)> generator, data_generator_options options,
            std::optional<api::watermark_strategy<std::int64_t>> strategy = std::nullopt,
            const state::operator_state_restore* restore = nullptr) {
    data_generator_source<std::int64_t>::assigner_fn assigner;
    data_generator_source<std::int64_t>::watermark_generator_factory watermarks;
    if (strategy) {
      assigner = strategy->assigner();
      watermarks = [s = *strategy, this] { return s.create_generator([this] { return now; }); };
    }
    source = std::make_unique<data_generator_source<std::int64_t>>(
      std::move(generator), options, assigner, watermarks, ctx, std::make_unique<captured>(*this));
    source->set_watermark_forwarder(&fwd);
    if (restore)
      source->initialize_state(*restore);
    source->open();
  }
  void advance_to(std::int64_t t) {
    now = t;
    clock.fire_due(t);
  }
  /// Steps until the source ends or waits, at most `steps` steps.
  source_status run(std::size_t per_step = 1000, int steps = 1000) {
    auto status = source_status::more_available;
    for (int i = 0; i < steps && status == source_status::more_available; ++i)
      status = source->emit_next(per_step);
    return status;
  }

  std::int64_t now = 0;
  element_time time;
  queued_processing_time_service clock;
  operator_context ctx;
  forwarder fwd;
  std::unique_ptr<data_generator_source<std::int64_t>> source;
  std::vector<std::int64_t> values;
  std::vector<std::optional<std::int64_t>> timestamps;
  std::vector<std::int64_t> watermarks;
  std::vector<bool> statuses;
  int wakes = 0;
};

std::int64_t square(std::int64_t i) { return i * i; }

state::operator_state_restore restore_of(std::vector<std::vector<char>> entries) {
  state::operator_subtask_state s;
  s.list_entries = std::move(entries);
  return state::operator_state_restore(std::move(s), false, true);
}

} // namespace

TEST_CASE("a data generator source deals the index space out to its subtasks and ends") {
  std::multiset<std::int64_t> all;
  for (int subtask = 0; subtask < 3; ++subtask) {
    source_fixture f(subtask, 3);
    f.make(square, {10, 0, 1});
    CHECK(f.run() == source_status::end_of_input);
    // Subtask i takes i, i+3, i+6…, in order, without timestamps (no strategy).
    for (std::size_t k = 0; k < f.values.size(); ++k) {
      CHECK(f.values[k] == square(subtask + 3 * static_cast<std::int64_t>(k)));
      CHECK_FALSE(f.timestamps[k].has_value());
    }
    all.insert(f.values.begin(), f.values.end());
  }
  std::multiset<std::int64_t> expected;
  for (std::int64_t i = 0; i < 10; ++i)
    expected.insert(square(i));
  CHECK(all == expected);
}

TEST_CASE("a data generator source stops a step at its budget and resumes where it was") {
  source_fixture f(0, 1);
  f.make([](std::int64_t i) { return i; }, {25, 0, 2});
  CHECK(f.source->emit_next(10) == source_status::more_available);
  CHECK(f.values.size() == 10);
  // Two splits round-robin: 0 (split 0), 1 (split 1), 2, 3...
  CHECK(f.values == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(f.run() == source_status::end_of_input);
  CHECK(f.values.size() == 25);
}

TEST_CASE("a data generator source restores its splits at another parallelism exactly") {
  // Two subtasks of two splits each, stopped at different points; their entries dealt out to
  // three subtasks (as operator list state is on rescaling) continue every split: each index
  // once in all, none lost.
  std::multiset<std::int64_t> seen;
  std::vector<std::vector<char>> entries;
  for (int subtask = 0; subtask < 2; ++subtask) {
    source_fixture f(subtask, 2);
    f.make([](std::int64_t i) { return i; }, {1000, 0, 2});
    f.source->emit_next(subtask == 0 ? 37 : 201);
    seen.insert(f.values.begin(), f.values.end());
    auto snap = f.source->snapshot_state(1);
    CHECK(snap.list_entries.size() == 2);
    for (auto& e : snap.list_entries)
      entries.push_back(e);
  }
  for (int subtask = 0; subtask < 3; ++subtask) {
    std::vector<std::vector<char>> mine;
    for (std::size_t k = static_cast<std::size_t>(subtask); k < entries.size(); k += 3)
      mine.push_back(entries[k]);
    auto restore = restore_of(mine);
    source_fixture f(subtask, 3);
    f.make([](std::int64_t i) { return i; }, {1000, 0, 1}, std::nullopt, &restore);
    CHECK(f.source->num_splits() == mine.size());
    CHECK(f.run() == source_status::end_of_input);
    seen.insert(f.values.begin(), f.values.end());
  }
  std::multiset<std::int64_t> expected;
  for (std::int64_t i = 0; i < 1000; ++i)
    expected.insert(i);
  CHECK(seen == expected);

  // Restored again from a snapshot of its finished splits, a subtask emits nothing more.
  source_fixture done(0, 1);
  done.make([](std::int64_t i) { return i; }, {4, 0, 1});
  done.run();
  auto again = restore_of(done.source->snapshot_state(2).list_entries);
  source_fixture restored(0, 1);
  restored.make([](std::int64_t i) { return i; }, {4, 0, 1}, std::nullopt, &again);
  CHECK(restored.run() == source_status::end_of_input);
  CHECK(restored.values.empty());
}

TEST_CASE("a rate-limited data generator source waits on a processing-time timer") {
  source_fixture f(0, 1);
  f.make([](std::int64_t i) { return i; }, {unbounded_count, 10, 1}); // 10 a second
  // One record is due at once; the next at 100 ms: the step ends with nothing available and a
  // timer wakes the task then, without a step in between.
  CHECK(f.source->emit_next(1000) == source_status::nothing_available);
  CHECK(f.values.size() == 1);
  CHECK(f.wakes == 0);
  f.advance_to(99);
  CHECK(f.wakes == 0);
  f.advance_to(100);
  CHECK(f.wakes == 1);
  CHECK(f.source->emit_next(1000) == source_status::nothing_available);
  CHECK(f.values.size() == 2);
  // After a stall of a second, it catches up with what the rate allowed, not more.
  f.advance_to(1100);
  CHECK(f.source->emit_next(1000) == source_status::nothing_available);
  CHECK(f.values.size() == 12);
  CHECK(f.wakes == 2);
}

TEST_CASE("a data generator source's watermark is the minimum over its splits") {
  // Split 0 takes the even indices, split 1 the odd ones; even records are 100 ms ahead.
  source_fixture f(0, 1);
  auto strategy = api::watermark_strategy<std::int64_t>::for_bounded_out_of_orderness(10ms)
                    .with_timestamp_assigner([](std::int64_t v) { return v; });
  f.make([](std::int64_t i) { return i % 2 == 0 ? 1000 + i + 100 : 1000 + i; }, {10, 0, 2},
         strategy);
  f.source->emit_next(6); // indices 0..5: evens up to 1104, odds up to 1005
  CHECK(f.timestamps.back() == std::optional<std::int64_t>(1005));
  CHECK(f.watermarks.empty());
  f.advance_to(200);
  REQUIRE(f.watermarks.size() == 1);
  CHECK(f.watermarks.back() == 1005 - 10 - 1);
  // The rest: split 1 ends at index 9 (1009), split 0 at 8 (1108); a finished split no longer
  // holds the watermark back, and the end is the task's (max watermark, not emitted here).
  CHECK(f.run() == source_status::end_of_input);
  CHECK(f.watermarks.back() <= 1108 - 10 - 1);
}

TEST_CASE("a data generator source goes idle when all its splits are and active again") {
  source_fixture f(0, 1);
  auto strategy = api::watermark_strategy<std::int64_t>::for_bounded_out_of_orderness(0ms)
                    .with_timestamp_assigner([](std::int64_t v) { return v; })
                    .with_idleness(300ms);
  f.make([](std::int64_t i) { return i * 10; }, {unbounded_count, 1, 2}, strategy); // 1 a second
  CHECK(f.source->emit_next(100) == source_status::nothing_available);
  CHECK(f.values.size() == 1);
  f.advance_to(200);
  CHECK(f.statuses.empty());
  f.advance_to(400);
  f.advance_to(600);
  // No record on either split for the idle timeout: the subtask is idle.
  REQUIRE(f.statuses.size() == 1);
  CHECK(f.statuses.back() == true);
  f.advance_to(1000);
  CHECK(f.source->emit_next(100) == source_status::nothing_available);
  CHECK(f.values.size() == 2);
  REQUIRE(f.statuses.size() == 2);
  CHECK(f.statuses.back() == false);
}

namespace {

struct tick {
  std::int64_t key = 0;
  std::int64_t at = 0;
  bool operator==(const tick&) const = default;
};
FLINT_RECORD(tick, key, at);

/// Index i: key i % 7, at i ms displaced earlier by up to 49 ms.
tick tick_at(std::int64_t i) {
  return {i % 7, std::max<std::int64_t>(0, i - (i * 7919) % 50)};
}

struct count_ticks : api::aggregate_function<tick, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() override { return 0; }
  std::int64_t add(const tick&, std::int64_t acc) override { return acc + 1; }
  std::int64_t get_result(const std::int64_t& acc) override { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) override { return a + b; }
};

using window_count = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

struct label_ticks : api::process_window_function<std::int64_t, window_count, std::int64_t> {
  void process(const std::int64_t& key, api::window_context<>& ctx,
               const std::vector<std::int64_t>& in, api::collector<window_count>& out) override {
    out.collect({key, ctx.window().end, in.front()});
  }
};

} // namespace

TEST_CASE("from_source: generated ticks in per-split watermarks through tumbling windows") {
  constexpr std::int64_t count = 20000;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> expected;
  for (std::int64_t i = 0; i < count; ++i) {
    auto t = tick_at(i);
    ++expected[{t.key, t.at / 100 * 100 + 100}];
  }
  for (int parallelism : {1, 2}) {
    CAPTURE(parallelism);
    api::stream_execution_environment env(api::configuration{
      {"parallelism.default", std::to_string(parallelism)},
      {"pipeline.auto-watermark-interval", "5 ms"}});
    api::data_generator_source<tick> source(tick_at, count);
    source.with_splits_per_subtask(3);
    // A bound above the displacement: no tick is late, whatever the splits' speeds.
    auto windows =
      env.from_source(source,
                      api::watermark_strategy<tick>::for_bounded_out_of_orderness(60ms)
                        .with_timestamp_assigner([](const tick& t) { return t.at; }),
                      "Ticks")
        .key_by([](const tick& t) { return t.key; })
        .window(api::tumbling_event_time_windows::of(100ms))
        .aggregate(count_ticks{}, label_ticks{});
    auto into = test::collect(windows);
    auto program = test::graphs_of(env);
    streaming::local_cluster_options options;
    options.task_managers = 1;
    options.slots_per_task_manager = parallelism;
    streaming::local_cluster cluster(options);
    auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> got;
    for (const auto& [key, end, n] : into->values) {
      CHECK_MESSAGE(!got.count({key, end}), "fired twice: key " << key << " at " << end);
      got[{key, end}] = n;
    }
    CHECK(got == expected);
  }
}
