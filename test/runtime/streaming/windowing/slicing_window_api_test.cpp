// The DataStream API puts the slicing window operator behind the LocalWindowAggregate wherever
// two phases apply, and the WindowOperator wherever they do not (ONE_PHASE, other triggers...).

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

/// The window's operator as a subtask of the job would get it.
template <class Build>
std::unique_ptr<streaming::stream_operator> window_operator_of(const std::string& strategy,
                                                               Build&& build) {
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
  static streaming::element_time time;
  streaming::operator_context ctx;
  ctx.key_group_max_parallelism = 128;
  ctx.key_groups = state::key_group_range_for_operator(128, 1, 0);
  ctx.time = &time;
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
