// The DataStream API puts the slicing window operator behind the LocalWindowAggregate wherever
// two phases apply, and the WindowOperator wherever they do not (ONE_PHASE, other triggers...).

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace flint;
using namespace std::chrono_literals;

namespace {

/// (user, event time)
using click = std::pair<std::int64_t, std::int64_t>;

struct count_clicks : api::aggregate_function<click, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() override { return 0; }
  std::int64_t add(const click&, std::int64_t acc) override { return acc + 1; }
  std::int64_t get_result(const std::int64_t& acc) override { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) override { return a + b; }
};

using contents = streaming::aggregating_contents<click, count_clicks>;
using sliced = streaming::slicing_window_operator<std::int64_t, contents, std::int64_t>;
using per_window =
  streaming::window_operator<std::int64_t, contents, std::int64_t, streaming::time_window>;

/// The record time of the operators window_operator_of builds.
streaming::element_time g_time;

/// Collects the window's results.
struct collecting final : streaming::one_input_operator<std::int64_t> {
  std::vector<std::int64_t> values;
  void process_element(const std::int64_t& value) override { values.push_back(value); }
};

/// The window's operator as a subtask of the job would get it (on `backend` under `dir`, its
/// results into `into`, when given).
template <class Build>
std::unique_ptr<streaming::stream_operator> window_operator_of(const std::string& strategy,
                                                               Build&& build,
                                                               const std::string& backend = {},
                                                               const std::string& dir = {},
                                                               collecting* into = nullptr) {
  api::stream_execution_environment env(
    api::configuration{{"pipeline.window.agg-phase-strategy", strategy}});
  auto timed = env.from_collection(std::vector<click>{{1, 10}})
                 .assign_timestamps_and_watermarks(
                   api::watermark_strategy<click>::for_monotonous_timestamps()
                     .with_timestamp_assigner([](const click& c) { return c.second; }));
  auto counts = build(timed.key_by([](const click& c) { return c.first; }));
  const auto* factory =
    dynamic_cast<const streaming::stream_operator_factory*>(counts.transformation()->factory().get());
  REQUIRE(factory != nullptr);
  streaming::operator_context ctx;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = state::key_group_range_for_operator(128, 1, 0);
  ctx.time = &g_time;
  if (!backend.empty()) {
    ctx.state_backend.type = backend;
    ctx.state_backend.local_dir = dir;
  }
  if (into != nullptr)
    ctx.chained_targets.push_back(into);
  return factory->create_operator(ctx);
}

} // namespace

TEST_CASE("the slicing window operator goes where two phases apply, the window operator elsewhere") {
  auto sliding = [](auto keyed) {
    return keyed.window(api::sliding_event_time_windows::of(10s, 2s)).aggregate(count_clicks{});
  };
  auto tumbling_late = [](auto keyed) {
    return keyed.window(api::tumbling_event_time_windows::of(1s))
      .allowed_lateness(5s)
      .aggregate(count_clicks{});
  };
  auto counted = [](auto keyed) {
    return keyed.window(api::tumbling_event_time_windows::of(1s))
      .trigger(api::count_trigger::of(2))
      .aggregate(count_clicks{});
  };
  for (const std::string strategy : {"AUTO", "TWO_PHASE"}) {
    CAPTURE(strategy);
    auto a = window_operator_of(strategy, sliding);
    CHECK(dynamic_cast<sliced*>(a.get()) != nullptr);
    auto b = window_operator_of(strategy, tumbling_late);
    CHECK(dynamic_cast<sliced*>(b.get()) != nullptr);
    auto c = window_operator_of(strategy, counted);
    CHECK(dynamic_cast<per_window*>(c.get()) != nullptr);
  }
  auto d = window_operator_of("ONE_PHASE", sliding);
  CHECK(dynamic_cast<per_window*>(d.get()) != nullptr);
}

TEST_CASE("with RocksDB the global phase is the per-window operator, its windows in the backend") {
  // The slicing operator keeps its slices on the heap between snapshots: state larger than
  // memory, the reason to pick RocksDB, would not fit (global_window_aggregate.hpp).
  using global_per_window =
    streaming::window_operator<std::int64_t, streaming::global_window_contents<std::int64_t, contents>,
                               std::int64_t, streaming::time_window>;
  auto sliding = [](auto keyed) {
    return keyed.window(api::sliding_event_time_windows::of(10s, 2s)).aggregate(count_clicks{});
  };
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_global_phase_" + std::to_string(::getpid()));
  for (const std::string strategy : {"AUTO", "TWO_PHASE"}) {
    CAPTURE(strategy);
    auto on_heap = window_operator_of(strategy, sliding, "hashmap", (dir / "a").string());
    CHECK(dynamic_cast<sliced*>(on_heap.get()) != nullptr);
    auto in_rocksdb = window_operator_of(strategy, sliding, "rocksdb", (dir / "b").string());
    CHECK(dynamic_cast<global_per_window*>(in_rocksdb.get()) != nullptr);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a per-window savepoint restores under two phases; a slicing one is refused under "
          "ONE_PHASE or RocksDB, saying what takes it") {
  // The operator ids are the same under either strategy (window_job_test), so a savepoint's
  // state reaches the window's operator whichever strategy and backend the restored job uses;
  // what that operator makes of it is what this checks.
  auto tumbling = [](auto keyed) {
    return keyed.window(api::tumbling_event_time_windows::of(1s)).aggregate(count_clicks{});
  };
  using partial = std::pair<std::int64_t, std::int64_t>;
  auto dir = std::filesystem::temp_directory_path()
    / ("flint_strategy_restore_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  int n = 0;
  auto snapshot = [&](streaming::stream_operator& op) {
    auto snap = op.snapshot_state(1);
    auto up = snap.keyed_upload(
      state::snapshot_target{(dir / ("chk" + std::to_string(n++))).string(), "", "w"});
    REQUIRE(up.has_value());
    return state::operator_state_restore(state::operator_subtask_state{{}, *up, {}}, false, true);
  };
  auto where = [&] { return (dir / ("op" + std::to_string(n++))).string(); };
  // Per-window state (ONE_PHASE on either backend, two phases on RocksDB) -> two phases on
  // either backend (the slicing operator on hashmap): the window fires there.
  for (const auto& [strategy, backend] :
       std::vector<std::pair<std::string, std::string>>{{"ONE_PHASE", "hashmap"},
                                                        {"ONE_PHASE", "rocksdb"},
                                                        {"AUTO", "rocksdb"}}) {
    for (const std::string to_backend : {"hashmap", "rocksdb"}) {
      CAPTURE(strategy);
      CAPTURE(backend);
      CAPTURE(to_backend);
      collecting before;
      auto first = window_operator_of(strategy, tumbling, backend, where(), &before);
      REQUIRE(dynamic_cast<sliced*>(first.get()) == nullptr);
      first->open();
      for (std::int64_t at : {10, 20, 30}) {
        g_time.set(at);
        if (strategy == "ONE_PHASE")
          dynamic_cast<streaming::one_input_operator<click>&>(*first).process_element({7, at});
        else
          dynamic_cast<streaming::one_input_operator<partial>&>(*first).process_element({7, 1});
      }
      auto restore = snapshot(*first);
      first.reset();
      collecting after;
      auto second = window_operator_of("AUTO", tumbling, to_backend, where(), &after);
      CHECK((dynamic_cast<sliced*>(second.get()) != nullptr) == (to_backend == "hashmap"));
      second->initialize_state(restore);
      second->open();
      dynamic_cast<streaming::one_input_operator<partial>&>(*second).process_watermark(
        std::numeric_limits<std::int64_t>::max());
      CHECK(before.values.empty());
      CHECK(after.values == std::vector<std::int64_t>{3});
    }
  }
  // The slicing operator's state (two phases on hashmap) -> ONE_PHASE on either backend, or two
  // phases on RocksDB: refused, naming what takes it.
  for (const auto& [strategy, backend] :
       std::vector<std::pair<std::string, std::string>>{{"ONE_PHASE", "hashmap"},
                                                        {"ONE_PHASE", "rocksdb"},
                                                        {"AUTO", "rocksdb"}}) {
    CAPTURE(strategy);
    CAPTURE(backend);
    collecting out;
    auto first = window_operator_of("AUTO", tumbling, "hashmap", where(), &out);
    REQUIRE(dynamic_cast<sliced*>(first.get()) != nullptr);
    first->open();
    g_time.set(999);
    dynamic_cast<streaming::one_input_operator<partial>&>(*first).process_element({7, 3});
    auto restore = snapshot(*first);
    first.reset();
    auto second = window_operator_of(strategy, tumbling, backend, where(), &out);
    CHECK_THROWS_WITH_AS(
      second->initialize_state(restore),
      doctest::Contains("agg-phase-strategy AUTO or TWO_PHASE and state.backend.type hashmap"),
      std::runtime_error);
  }
  std::filesystem::remove_all(dir);
}
