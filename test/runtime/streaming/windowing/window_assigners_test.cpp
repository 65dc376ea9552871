#include "runtime/streaming/windowing/global_windows.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

using namespace flint::streaming;
using namespace std::chrono_literals;
using windows = std::vector<time_window>;

namespace {

struct click {
  std::int64_t gap_ms = 0;
};

} // namespace

TEST_CASE("tumbling event-time windows hold each timestamp once, aligned to the offset") {
  auto assigner = tumbling_event_time_windows::of(5s);
  CHECK(assigner.assign_windows(0, 999) == windows{{0, 5000}});
  CHECK(assigner.assign_windows(4999, 0) == windows{{0, 5000}});
  CHECK(assigner.assign_windows(5000, 0) == windows{{5000, 10000}});
  CHECK(assigner.assign_windows(-1, 0) == windows{{-5000, 0}});
  CHECK(assigner.is_event_time());
  CHECK_FALSE(assigner.is_merging());
  CHECK(assigner.default_trigger() == default_trigger_kind::event_time);
  CHECK(assigner.to_string() == "TumblingEventTimeWindows(5000)");

  auto offset = tumbling_event_time_windows::of(5s, 100ms);
  CHECK(offset.assign_windows(100, 0) == windows{{100, 5100}});
  CHECK(offset.assign_windows(5099, 0) == windows{{100, 5100}});
  CHECK(offset.assign_windows(5100, 0) == windows{{5100, 10100}});
  CHECK(offset.assign_windows(99, 0) == windows{{-4900, 100}});

  // Daily windows at local midnight of UTC+8.
  auto daily = tumbling_event_time_windows::of(24h, -8h);
  auto day = std::chrono::milliseconds(24h).count();
  auto eight = std::chrono::milliseconds(8h).count();
  CHECK(daily.assign_windows(0, 0) == windows{{-eight, day - eight}});
  CHECK(daily.assign_windows(day - eight, 0) == windows{{day - eight, 2 * day - eight}});
}

TEST_CASE("windows near the ends of the int64 range are cut there instead of wrapping") {
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  // max = ...807 and min = -...808: the aligned windows of 100 around them reach past the range.
  auto tumbling = tumbling_event_time_windows::of(100ms);
  CHECK(tumbling.assign_windows(max - 5, 0) == windows{{max - 7, max}});
  CHECK(tumbling.assign_windows(max - 8, 0) == windows{{max - 107, max - 7}});
  // INT64_MAX is taken as INT64_MAX - 1: no window ends after INT64_MAX.
  CHECK(tumbling.assign_windows(max, 0) == windows{{max - 7, max}});
  CHECK(tumbling.assign_windows(min + 5, 0) == windows{{min, min + 8}});
  CHECK(tumbling_event_time_windows::of(100ms, 50ms).assign_windows(max - 5, 0)
        == windows{{max - 57, max}});
  CHECK(tumbling_event_time_windows::of(100ms, -50ms).assign_windows(min + 5, 0)
        == windows{{min, min + 58}});

  auto sliding = sliding_event_time_windows::of(100ms, 20ms);
  CHECK(sliding.assign_windows(max - 5, 0)
        == windows{{max - 7, max}, {max - 27, max}, {max - 47, max}, {max - 67, max},
                   {max - 87, max}});
  CHECK(sliding.assign_windows(min + 5, 0)
        == windows{{min, min + 88}, {min, min + 68}, {min, min + 48}, {min, min + 28},
                   {min, min + 8}});
}

TEST_CASE("tumbling windows refuse a size <= 0, |offset| >= size and records without time") {
  CHECK_THROWS_AS(tumbling_event_time_windows::of(0ms), std::invalid_argument);
  CHECK_THROWS_AS(tumbling_event_time_windows::of(-5ms), std::invalid_argument);
  CHECK_THROWS_AS(tumbling_event_time_windows::of(5s, 5s), std::invalid_argument);
  CHECK_THROWS_AS(tumbling_event_time_windows::of(5s, -5s), std::invalid_argument);
  CHECK_NOTHROW(tumbling_event_time_windows::of(5s, -4999ms));
  CHECK_THROWS_AS(tumbling_processing_time_windows::of(5s, 6s), std::invalid_argument);
  CHECK_THROWS_AS(tumbling_event_time_windows::of(5s).assign_windows(no_timestamp, 0),
                  std::runtime_error);
}

TEST_CASE("tumbling processing-time windows use the time an element arrives at") {
  auto assigner = tumbling_processing_time_windows::of(1s, 10ms);
  CHECK(assigner.assign_windows(no_timestamp, 1'500) == windows{{1'010, 2'010}});
  CHECK(assigner.assign_windows(999'999, 5) == windows{{-990, 10}});
  CHECK_FALSE(assigner.is_event_time());
  CHECK(assigner.default_trigger() == default_trigger_kind::processing_time);
}

TEST_CASE("sliding event-time windows: size / slide windows per element, latest first") {
  auto assigner = sliding_event_time_windows::of(5s, 1s);
  CHECK(assigner.assign_windows(0, 0) ==
        windows{{0, 5000}, {-1000, 4000}, {-2000, 3000}, {-3000, 2000}, {-4000, 1000}});
  CHECK(assigner.assign_windows(4999, 0) ==
        windows{{4000, 9000}, {3000, 8000}, {2000, 7000}, {1000, 6000}, {0, 5000}});
  CHECK(assigner.assign_windows(-1, 0) ==
        windows{{-1000, 4000}, {-2000, 3000}, {-3000, 2000}, {-4000, 1000}, {-5000, 0}});
  for (std::int64_t ts : {-12'345, -1, 0, 1, 777, 5'000, 123'456}) {
    auto ws = assigner.assign_windows(ts, 0);
    CHECK(ws.size() == 5);
    for (const auto& w : ws)
      CHECK((w.start <= ts && ts <= w.max_timestamp()));
  }
  CHECK(assigner.default_trigger() == default_trigger_kind::event_time);
  CHECK(assigner.to_string() == "SlidingEventTimeWindows(5000, 1000)");
}

TEST_CASE("sliding windows with an offset, and a size that is no multiple of the slide") {
  auto offset = sliding_event_time_windows::of(5s, 1s, 100ms);
  CHECK(offset.assign_windows(100, 0) ==
        windows{{100, 5100}, {-900, 4100}, {-1900, 3100}, {-2900, 2100}, {-3900, 1100}});

  // Windows of 5 s every 2 s: three or two windows, as the timestamp lies.
  auto uneven = sliding_event_time_windows::of(5s, 2s);
  CHECK(uneven.assign_windows(0, 0) == windows{{0, 5000}, {-2000, 3000}, {-4000, 1000}});
  CHECK(uneven.assign_windows(1000, 0) == windows{{0, 5000}, {-2000, 3000}});
}

TEST_CASE("sliding windows refuse bad sizes, slides and offsets") {
  CHECK_THROWS_AS(sliding_event_time_windows::of(5s, 0ms), std::invalid_argument);
  CHECK_THROWS_AS(sliding_event_time_windows::of(0ms, 1s), std::invalid_argument);
  CHECK_THROWS_AS(sliding_event_time_windows::of(5s, 1s, 1s), std::invalid_argument);
  CHECK_THROWS_AS(sliding_event_time_windows::of(100'000'000ms, 1ms), std::invalid_argument);
  CHECK_THROWS_AS(sliding_processing_time_windows::of(5s, 1s, -1s), std::invalid_argument);
  CHECK_THROWS_AS(sliding_event_time_windows::of(5s, 1s).assign_windows(no_timestamp, 0),
                  std::runtime_error);
}

TEST_CASE("sliding processing-time windows use the time an element arrives at") {
  auto assigner = sliding_processing_time_windows::of(3s, 1s);
  CHECK(assigner.assign_windows(no_timestamp, 2'500) ==
        windows{{2000, 5000}, {1000, 4000}, {0, 3000}});
  CHECK(assigner.default_trigger() == default_trigger_kind::processing_time);
}

TEST_CASE("session windows open the window from t to t + gap and merge") {
  auto assigner = event_time_session_windows::with_gap(10s);
  CHECK(assigner.assign_windows(-3, 0) == windows{{-3, 9'997}});
  CHECK(assigner.is_merging());
  CHECK(assigner.is_event_time());
  CHECK(assigner.default_trigger() == default_trigger_kind::event_time);
  std::vector<time_window> merged;
  assigner.merge_windows({{0, 10'000}, {5'000, 15'000}, {30'000, 40'000}},
                         [&](const std::vector<time_window>&, const time_window& result) {
                           merged.push_back(result);
                         });
  CHECK(merged == windows{{0, 15'000}});
  CHECK_THROWS_AS(event_time_session_windows::with_gap(0ms), std::invalid_argument);

  auto processing = processing_time_session_windows::with_gap(1s);
  CHECK(processing.assign_windows(no_timestamp, 42) == windows{{42, 1'042}});
  CHECK_FALSE(processing.is_event_time());
  CHECK(processing.is_merging());
  CHECK_THROWS_AS(processing_time_session_windows::with_gap(-1s), std::invalid_argument);
}

TEST_CASE("dynamic session gaps come from the element") {
  auto assigner = event_time_session_windows::with_dynamic_gap(
    [](const click& c) { return std::chrono::milliseconds(c.gap_ms); });
  const window_assigner<time_window>& any = assigner;
  windows_of<click, time_window> assign(any);
  CHECK(assign(click{100}, 1'000, 0) == windows{{1'000, 1'100}});
  CHECK(assign(click{5}, 1'000, 0) == windows{{1'000, 1'005}});
  CHECK(any.is_merging());
  CHECK(any.is_event_time());
  CHECK_THROWS_AS(assign(click{0}, 1'000, 0), std::invalid_argument);
  // Without the element the assigner cannot answer: the operator asked the wrong way.
  CHECK_THROWS_AS(any.assign_windows(1'000, 0), std::logic_error);

  auto processing = processing_time_session_windows::with_dynamic_gap(
    [](const click& c) { return std::chrono::seconds(c.gap_ms); });
  windows_of<click, time_window> assign_processing(processing);
  CHECK(assign_processing(click{2}, no_timestamp, 10) == windows{{10, 2'010}});
  CHECK_FALSE(processing.is_event_time());
}

TEST_CASE("windows_of passes over the element for assigners that do not need it") {
  auto assigner = tumbling_event_time_windows::of(10ms);
  windows_of<click, time_window> assign(assigner);
  CHECK(assign(click{}, 25, 0) == windows{{20, 30}});
}

TEST_CASE("global windows put everything in the one window, fired by no default trigger") {
  auto assigner = global_windows::create();
  CHECK(assigner.assign_windows(no_timestamp, 0) == std::vector<global_window>{global_window{}});
  CHECK(assigner.assign_windows(5, 7) == std::vector<global_window>{global_window{}});
  CHECK(assigner.default_trigger() == default_trigger_kind::never);
  CHECK_FALSE(assigner.is_event_time());
  CHECK_FALSE(assigner.is_merging());
}

TEST_CASE("assigners append into the operator's buffer, keeping what it holds") {
  windows out{{1, 2}};
  sliding_event_time_windows::of(2s, 1s).append_windows(0, 0, out);
  CHECK(out == windows{{1, 2}, {0, 2000}, {-1000, 1000}});

  auto assigner = event_time_session_windows::with_dynamic_gap(
    [](const click& c) { return std::chrono::milliseconds(c.gap_ms); });
  windows_of<click, time_window> assign(assigner);
  out.clear();
  assign(click{5}, 10, 0, out);
  assign(click{7}, 20, 0, out);
  CHECK(out == windows{{10, 15}, {20, 27}});
}
