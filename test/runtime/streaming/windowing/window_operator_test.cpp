// The window operator through the operator test harness: each assigner, trigger and evictor,
// session merging, allowed lateness, late data, per-window and global state, and
// processing-time windows on the harness's clock.

#include "../operator_test_harness.hpp"

#include "runtime/state/keyed_state_files.hpp"
#include "runtime/streaming/windowing/continuous_event_time_trigger.hpp"
#include "runtime/streaming/windowing/count_evictor.hpp"
#include "runtime/streaming/windowing/count_trigger.hpp"
#include "runtime/streaming/windowing/global_windows.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/purging_trigger.hpp"
#include "runtime/streaming/windowing/time_evictor.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <unistd.h>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

namespace {

using record = std::tuple<std::string, std::int64_t>;
using harness = test::operator_test_harness<record, record>;

record sum(const record& a, const record& b) {
  return {std::get<0>(a), std::get<1>(a) + std::get<1>(b)};
}
std::string key_of(const record& r) { return std::get<0>(r); }

template <class A>
window_settings<record, typename A::window_type> settings_of(A assigner) {
  window_settings<record, typename A::window_type> s;
  s.assigner = std::make_shared<A>(std::move(assigner));
  return s;
}

/// A reducing (summing) window operator under the harness.
template <class W>
void open_sum(harness& h, window_settings<record, W> s) {
  using contents = reducing_contents<record, record (*)(const record&, const record&)>;
  h.open(std::make_unique<window_operator<std::string, contents, record, W>>(
    std::move(s), contents(&sum), std::make_unique<pass_through_window_function<record, std::string, W>>(),
    key_of, h.context(), h.make_output()));
}

using fired = std::vector<test::stamped<record>>;

test::stamped<record> at(std::string key, std::int64_t n, std::int64_t ts) {
  return {{std::move(key), n}, ts};
}

} // namespace

TEST_CASE("tumbling event-time windows sum per key and fire at the watermark with end - 1") {
  harness h;
  open_sum(h, settings_of(tumbling_event_time_windows::of(10ms)));
  h.process_element({"a", 1}, 3);
  h.process_element({"a", 2}, 9);
  h.process_element({"b", 5}, 4);
  h.process_element({"a", 4}, 12);
  h.process_watermark(8);
  CHECK(h.take_records().empty());
  h.process_watermark(9);
  auto out = h.take_records();
  std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.value < y.value; });
  CHECK(out == fired{at("a", 3, 9), at("b", 5, 9)});
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{8, 9});
  h.end_input();
  CHECK(h.take_records() == fired{at("a", 4, 19)});
}

namespace {

/// "key@max_timestamp: v1 v2 ..." for each firing: what the window held, in order.
template <class W>
struct describe : process_window_function<record, std::string, std::string, W> {
  void process(const std::string& key, window_context<W>& ctx, const std::vector<record>& in,
               output<std::string>& out) override {
    std::string s = key + "@" + std::to_string(ctx.window().max_timestamp()) + ":";
    for (const auto& r : in)
      s += " " + std::to_string(std::get<1>(r));
    out.collect(s);
  }
};

using text_harness = test::operator_test_harness<record, std::string>;

/// A window operator keeping its elements (process, evictors) that describes each firing.
template <class W>
void open_describe(text_harness& h, window_settings<record, W> s) {
  using fn = user_process_window_function<std::vector<record>, std::string, std::string, W,
                                          describe<W>>;
  h.open(std::make_unique<window_operator<std::string, list_contents<record>, std::string, W>>(
    std::move(s), list_contents<record>(), std::make_unique<fn>(describe<W>{}), key_of,
    h.context(), h.make_output()));
}

std::vector<std::string> texts(text_harness& h) {
  std::vector<std::string> out;
  for (auto& r : h.take_records())
    out.push_back(r.value);
  return out;
}

} // namespace

namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (const auto& x : v)
      s += "\"" + x + "\" ";
    return (s + "}").c_str();
  }
};
template <>
struct StringMaker<fired> {
  static String convert(const fired& v) {
    std::string s = "{";
    for (const auto& x : v)
      s += "(" + std::get<0>(x.value) + " " + std::to_string(std::get<1>(x.value)) + " @"
        + (x.timestamp ? std::to_string(*x.timestamp) : std::string("-")) + ") ";
    return (s + "}").c_str();
  }
};
} // namespace doctest

TEST_CASE("tumbling windows with an offset start at the offset") {
  harness h;
  open_sum(h, settings_of(tumbling_event_time_windows::of(10ms, 3ms)));
  h.process_element({"a", 1}, 2);  // [-7, 3)
  h.process_element({"a", 10}, 3); // [3, 13)
  h.process_element({"a", 100}, 12);
  h.process_watermark(12);
  CHECK(h.take_records() == fired{at("a", 1, 2), at("a", 110, 12)});
}

TEST_CASE("sliding event-time windows put an element into every window that covers it") {
  text_harness h;
  open_describe(h, settings_of(sliding_event_time_windows::of(10ms, 5ms)));
  h.process_element({"a", 1}, 3); // [-5, 5) and [0, 10)
  h.process_element({"a", 2}, 7); // [0, 10) and [5, 15)
  h.process_watermark(4);
  CHECK(texts(h) == std::vector<std::string>{"a@4: 1"});
  h.process_watermark(9);
  CHECK(texts(h) == std::vector<std::string>{"a@9: 1 2"});
  h.process_watermark(14);
  CHECK(texts(h) == std::vector<std::string>{"a@14: 2"});
}

TEST_CASE("session windows merge, a record bridging two sessions joins them into one") {
  for (bool reducing : {true, false}) {
    CAPTURE(reducing);
    harness sums;
    text_harness lists;
    auto s = settings_of(event_time_session_windows::with_gap(10ms));
    auto push = [&](const record& r, std::int64_t ts) {
      if (reducing)
        sums.process_element(r, ts);
      else
        lists.process_element(r, ts);
    };
    if (reducing)
      open_sum(sums, s);
    else
      open_describe(lists, s);
    push({"a", 1}, 0);   // [0, 10)
    push({"a", 2}, 25);  // [25, 35)
    push({"b", 100}, 5); // another key's session [5, 15)
    push({"a", 4}, 8);   // [8, 18): grows the first session to [0, 18)
    push({"a", 8}, 17);  // [17, 27): bridges [0, 18) and [25, 35) into [0, 35)
    if (reducing) {
      sums.process_watermark(33);
      CHECK(sums.take_records() == fired{at("b", 100, 14)});
      sums.process_watermark(34);
      CHECK(sums.take_records() == fired{at("a", 15, 34)});
      // Both sessions' cleanup timers went with the merge: nothing fires twice.
      sums.end_input();
      CHECK(sums.take_records().empty());
    } else {
      // The merged contents: the surviving state window's, then the others' (Flink's order).
      lists.process_watermark(34);
      CHECK(texts(lists) == std::vector<std::string>{"b@14: 100", "a@34: 1 4 2 8"});
      lists.end_input();
      CHECK(texts(lists).empty());
    }
  }
}

TEST_CASE("dynamic session gaps come from the element") {
  harness h;
  open_sum(h, settings_of(event_time_session_windows::with_dynamic_gap(
                [](const record& r) { return std::chrono::milliseconds(std::get<1>(r)); })));
  h.process_element({"a", 5}, 0);  // [0, 5)
  h.process_element({"a", 20}, 4); // [4, 24): merges
  h.process_element({"a", 1}, 30); // [30, 31)
  h.process_watermark(40);
  CHECK(h.take_records() == fired{at("a", 25, 23), at("a", 1, 30)});
}

TEST_CASE("processing-time windows fire on the harness clock, with the window's timestamp") {
  harness h;
  open_sum(h, settings_of(tumbling_processing_time_windows::of(100ms)));
  h.set_processing_time(1010);
  h.process_element({"a", 1});
  h.process_element({"b", 2});
  h.set_processing_time(1098);
  h.process_element({"a", 3});
  CHECK(h.take_records().empty());
  // The window [1000, 1100) fires when the clock reaches its max timestamp.
  h.set_processing_time(1099);
  auto out = h.take_records();
  std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.value < y.value; });
  CHECK(out == fired{at("a", 4, 1099), at("b", 2, 1099)});
  h.set_processing_time(1150);
  h.process_element({"a", 5});
  // A watermark does not fire processing-time windows.
  h.process_watermark(5000);
  CHECK(h.take_records().empty());
  h.set_processing_time(1250);
  CHECK(h.take_records() == fired{at("a", 5, 1199)});
}

TEST_CASE("processing-time sessions close after a gap of the clock") {
  text_harness h;
  open_describe(h, settings_of(processing_time_session_windows::with_gap(50ms)));
  h.set_processing_time(100);
  h.process_element({"a", 1});
  h.set_processing_time(140);
  h.process_element({"a", 2}); // merges: [100, 190)
  h.set_processing_time(150);
  CHECK(texts(h).empty());
  h.set_processing_time(189);
  CHECK(texts(h) == std::vector<std::string>{"a@189: 1 2"});
}

TEST_CASE("global windows fire by a count trigger; purging starts each count afresh") {
  for (bool purging : {false, true}) {
    CAPTURE(purging);
    harness h;
    auto s = settings_of(global_windows::create());
    std::unique_ptr<trigger<record, global_window>> count =
      count_trigger<record, global_window>::of(2);
    s.window_trigger = purging
      ? std::shared_ptr<trigger<record, global_window>>(
          purging_trigger<record, global_window>::of(std::move(count)))
      : std::shared_ptr<trigger<record, global_window>>(std::move(count));
    open_sum(h, s);
    for (std::int64_t v : {1, 2, 3, 4, 5})
      h.process_element({"a", v}, v);
    constexpr auto end = std::numeric_limits<std::int64_t>::max();
    if (purging)
      CHECK(h.take_records() == fired{at("a", 3, end), at("a", 7, end)});
    else
      CHECK(h.take_records() == fired{at("a", 3, end), at("a", 10, end)});
    // Global windows never end: the final watermark fires nothing.
    h.end_input();
    CHECK(h.take_records().empty());
  }
}

TEST_CASE("a continuous event-time trigger fires early every interval and at the end") {
  text_harness h;
  auto s = settings_of(tumbling_event_time_windows::of(100ms));
  s.window_trigger = continuous_event_time_trigger<record>::of(30ms);
  open_describe(h, s);
  h.process_element({"a", 1}, 5); // early fires at 30, 60, 90
  h.process_watermark(29);
  CHECK(texts(h).empty());
  h.process_watermark(30);
  CHECK(texts(h) == std::vector<std::string>{"a@99: 1"});
  h.process_element({"a", 2}, 40);
  h.process_watermark(59);
  CHECK(texts(h).empty());
  h.process_watermark(60);
  CHECK(texts(h) == std::vector<std::string>{"a@99: 1 2"});
  h.process_watermark(98);
  CHECK(texts(h) == std::vector<std::string>{"a@99: 1 2"});
  // The next early fire would be at 120, past the end: the end's one timer fires once.
  h.process_watermark(99);
  CHECK(texts(h) == std::vector<std::string>{"a@99: 1 2"});
}

TEST_CASE("the event-time trigger fires once per window; an event-time window fires only then") {
  text_harness h;
  auto s = settings_of(tumbling_event_time_windows::of(10ms));
  s.window_trigger = event_time_trigger<record>::create();
  open_describe(h, s);
  h.process_element({"a", 1}, 1);
  h.process_watermark(8);
  CHECK(texts(h).empty());
  h.process_watermark(100);
  CHECK(texts(h) == std::vector<std::string>{"a@9: 1"});
}

TEST_CASE("a count evictor keeps the last elements before the function, or after it") {
  SUBCASE("before") {
    text_harness h;
    auto s = settings_of(global_windows::create());
    s.window_trigger = count_trigger<record, global_window>::of(3);
    s.window_evictor = count_evictor<record, global_window>::of(2);
    open_describe(h, s);
    for (std::int64_t v = 1; v <= 6; ++v)
      h.process_element({"a", v}, v);
    auto end = std::to_string(std::numeric_limits<std::int64_t>::max());
    CHECK(texts(h) == std::vector<std::string>{"a@" + end + ": 2 3", "a@" + end + ": 5 6"});
  }
  SUBCASE("after") {
    text_harness h;
    auto s = settings_of(global_windows::create());
    s.window_trigger = count_trigger<record, global_window>::of(2);
    s.window_evictor = count_evictor<record, global_window>::of(1, true);
    open_describe(h, s);
    for (std::int64_t v = 1; v <= 4; ++v)
      h.process_element({"a", v}, v);
    auto end = std::to_string(std::numeric_limits<std::int64_t>::max());
    CHECK(texts(h) == std::vector<std::string>{"a@" + end + ": 1 2", "a@" + end + ": 2 3 4"});
  }
}

TEST_CASE("a time evictor keeps the elements of the last interval before the newest") {
  text_harness h;
  auto s = settings_of(tumbling_event_time_windows::of(100ms));
  s.window_evictor = time_evictor<record>::of(20ms);
  open_describe(h, s);
  for (std::int64_t ts : {10, 50, 75, 80, 95})
    h.process_element({"a", ts}, ts);
  h.process_watermark(99);
  CHECK(texts(h) == std::vector<std::string>{"a@99: 80 95"});
}

TEST_CASE("allowed lateness: late elements fire the window again until its cleanup time") {
  harness h;
  auto s = settings_of(tumbling_event_time_windows::of(10ms));
  s.allowed_lateness = 5;
  open_sum(h, s);
  h.process_element({"a", 1}, 3);
  h.process_watermark(9);
  CHECK(h.take_records() == fired{at("a", 1, 9)});
  // Late but within the lateness: the window fires at once with everything it holds.
  h.process_element({"a", 2}, 4);
  CHECK(h.take_records() == fired{at("a", 3, 9)});
  h.process_watermark(13);
  h.process_element({"a", 4}, 9);
  CHECK(h.take_records() == fired{at("a", 7, 9)});
  CHECK(h.op().late_records_dropped() == 0);
  // Cleanup at 9 + 5: the window is gone; later elements are dropped and counted.
  h.process_watermark(14);
  h.process_element({"a", 8}, 5);
  h.process_element({"b", 8}, 0);
  CHECK(h.take_records().empty());
  CHECK(h.op().late_records_dropped() == 2);
  // An element of a window still open is not late.
  h.process_element({"a", 16}, 15);
  h.end_input();
  CHECK(h.take_records() == fired{at("a", 16, 19)});
  CHECK(h.op().late_records_dropped() == 2);
}

namespace {

/// Takes the records of a side output (chained to the operator under test).
struct side_collector final : one_input_operator<record> {
  std::vector<record> values;
  void process_element(const record& r) override { values.push_back(r); }
};

} // namespace

TEST_CASE("late elements go to the late-data side output instead of being dropped") {
  harness h;
  side_collector late;
  h.context().chained_targets = {&late};
  h.context().chained_target_tags = {"late"};
  auto s = settings_of(tumbling_event_time_windows::of(10ms));
  s.late_data_tag = output_tag<record>("late");
  open_sum(h, s);
  h.process_element({"a", 1}, 3);
  h.process_watermark(10);
  h.process_element({"a", 2}, 9);  // its window fired and was cleaned up
  h.process_element({"a", 4}, 10); // a window still open
  CHECK(late.values == std::vector<record>{{"a", 2}});
  // Flink counts only what it drops; what goes to the side output is not dropped.
  CHECK(h.op().late_records_dropped() == 0);
  h.end_input();
  CHECK(h.take_records() == fired{at("a", 1, 9), at("a", 4, 19)});
}

TEST_CASE("late session elements are dropped; merging cannot move a window behind the watermark") {
  harness h;
  open_sum(h, settings_of(event_time_session_windows::with_gap(10ms)));
  h.process_element({"a", 1}, 0);
  h.process_watermark(20);
  CHECK(h.take_records() == fired{at("a", 1, 9)});
  h.process_element({"a", 2}, 5); // [5, 15) ends before the watermark
  CHECK(h.op().late_records_dropped() == 1);
  CHECK(h.take_records().empty());
}

namespace {

/// Counts its firings per window (window state) and per key (global state); "key@end w/g".
struct count_firings : process_window_function<record, std::string, std::string, time_window> {
  std::shared_ptr<std::vector<std::string>> cleared = std::make_shared<std::vector<std::string>>();
  void process(const std::string& key, window_context<time_window>& ctx,
               const std::vector<record>&, output<std::string>& out) override {
    auto w = ctx.window_state().get_state<std::int64_t>("fires");
    auto g = ctx.global_state().get_state<std::int64_t>("fires");
    w.update(w.value().value_or(0) + 1);
    g.update(g.value().value_or(0) + 1);
    out.collect(key + "@" + std::to_string(ctx.window().max_timestamp()) + " "
                + std::to_string(*w.value()) + "/" + std::to_string(*g.value()));
  }
  void clear(window_context<time_window>& ctx) override {
    auto w = ctx.window_state().get_state<std::int64_t>("fires");
    cleared->push_back(std::to_string(ctx.window().max_timestamp()) + " had "
                       + std::to_string(w.value().value_or(0)));
  }
};

} // namespace

TEST_CASE("process functions keep per-window state (cleared with the window) and per-key state") {
  text_harness h;
  auto s = settings_of(tumbling_event_time_windows::of(10ms));
  s.allowed_lateness = 10;
  count_firings fn;
  auto cleared = fn.cleared;
  using internal = user_process_window_function<std::vector<record>, std::string, std::string,
                                                time_window, count_firings>;
  h.open(std::make_unique<window_operator<std::string, list_contents<record>, std::string,
                                          time_window>>(
    s, list_contents<record>(), std::make_unique<internal>(fn), key_of, h.context(),
    h.make_output()));
  h.process_element({"a", 1}, 1);
  h.process_element({"a", 1}, 12);
  h.process_watermark(9);
  CHECK(texts(h) == std::vector<std::string>{"a@9 1/1"});
  h.process_element({"a", 1}, 2); // late firing of [0, 10)
  CHECK(texts(h) == std::vector<std::string>{"a@9 2/2"});
  h.process_watermark(19);
  CHECK(texts(h) == std::vector<std::string>{"a@19 1/3"});
  h.process_watermark(19 + 10);
  CHECK(*cleared == std::vector<std::string>{"9 had 2", "19 had 1"});
  // A window of the same bounds later (a new key's, a restarted stream) would start from
  // nothing: the operator removed the window state after clear().
  cleared->clear();
  h.process_element({"a", 1}, 35);
  h.end_input();
  CHECK(texts(h) == std::vector<std::string>{"a@39 1/4"});
}

TEST_CASE("per-window state is refused with merging windows, as in Flink") {
  text_harness h;
  auto s = settings_of(event_time_session_windows::with_gap(10ms));
  using internal = user_process_window_function<std::vector<record>, std::string, std::string,
                                                time_window, count_firings>;
  h.open(std::make_unique<window_operator<std::string, list_contents<record>, std::string,
                                          time_window>>(
    s, list_contents<record>(), std::make_unique<internal>(count_firings{}), key_of, h.context(),
    h.make_output()));
  h.process_element({"a", 1}, 1);
  CHECK_THROWS_WITH_AS(h.process_watermark(100),
                       "Per-window state is not allowed when using merging windows.",
                       std::logic_error);
}

TEST_CASE("a merging assigner refuses a trigger that cannot merge") {
  harness h;
  auto s = settings_of(event_time_session_windows::with_gap(10ms));
  s.window_trigger = continuous_event_time_trigger<record>::of(5ms); // merges: accepted
  open_sum(h, s);
  struct no_merge final : trigger<record, time_window> {
    trigger_result on_element(const record&, std::int64_t, const time_window&,
                              trigger_context&) override {
      return trigger_result::continue_;
    }
    trigger_result on_processing_time(std::int64_t, const time_window&,
                                      trigger_context&) override {
      return trigger_result::continue_;
    }
    trigger_result on_event_time(std::int64_t, const time_window&, trigger_context&) override {
      return trigger_result::continue_;
    }
    void clear(const time_window&, trigger_context&) override {}
  };
  harness other;
  auto bad = settings_of(event_time_session_windows::with_gap(10ms));
  bad.window_trigger = std::make_shared<no_merge>();
  CHECK_THROWS_AS(open_sum(other, bad), std::invalid_argument);
}

TEST_CASE("count triggers of merged sessions add their counts") {
  harness h;
  auto s = settings_of(event_time_session_windows::with_gap(10ms));
  s.window_trigger = count_trigger<record>::of(3);
  open_sum(h, s);
  h.process_element({"a", 1}, 0);
  h.process_element({"a", 2}, 18);
  CHECK(h.take_records().empty());
  h.process_element({"a", 4}, 9); // bridges: the counts are 1 + 1, and this one makes 3
  CHECK(h.take_records() == fired{at("a", 7, 27)});
}

namespace {

/// (count, sum) -> "sum/count": merges accumulators of merged sessions.
struct average {
  std::pair<std::int64_t, std::int64_t> create_accumulator() { return {0, 0}; }
  std::pair<std::int64_t, std::int64_t> add(const record& r,
                                            std::pair<std::int64_t, std::int64_t> acc) {
    return {acc.first + 1, acc.second + std::get<1>(r)};
  }
  std::string get_result(const std::pair<std::int64_t, std::int64_t>& acc) {
    return std::to_string(acc.second) + "/" + std::to_string(acc.first);
  }
  std::pair<std::int64_t, std::int64_t> merge(std::pair<std::int64_t, std::int64_t> a,
                                              std::pair<std::int64_t, std::int64_t> b) {
    return {a.first + b.first, a.second + b.second};
  }
};

} // namespace

TEST_CASE("aggregating session windows merge their accumulators when sessions join") {
  text_harness h;
  using contents = aggregating_contents<record, average>;
  h.open(std::make_unique<window_operator<std::string, contents, std::string, time_window>>(
    settings_of(event_time_session_windows::with_gap(10ms)), contents(average{}),
    std::make_unique<pass_through_window_function<std::string, std::string, time_window>>(),
    key_of, h.context(), h.make_output()));
  h.process_element({"a", 1}, 0);
  h.process_element({"a", 2}, 18);
  h.process_element({"a", 6}, 9); // bridges [0, 10) and [18, 28)
  h.process_element({"a", 100}, 50);
  h.end_input();
  CHECK(texts(h) == std::vector<std::string>{"9/3", "100/1"});
}

TEST_CASE("global windows fire nothing by their default trigger") {
  harness h;
  open_sum(h, settings_of(global_windows::create()));
  h.process_element({"a", 1}, 1);
  h.end_input();
  CHECK(h.take_records().empty());
}

namespace {

/// A user trigger: fires and purges on an element of 100 or more, and also at the first
/// processing time 50 after the window's first element (its partitioned state remembers when).
struct big_or_timeout final : trigger<record, time_window> {
  trigger_result on_element(const record& r, std::int64_t, const time_window&,
                            trigger_context& ctx) override {
    if (!ctx.get_int64_state("deadline")) {
      auto deadline = ctx.current_processing_time() + 50;
      ctx.put_int64_state("deadline", deadline);
      ctx.register_processing_time_timer(deadline);
    }
    return std::get<1>(r) >= 100 ? trigger_result::fire_and_purge : trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t time, const time_window&,
                                    trigger_context& ctx) override {
    if (ctx.get_int64_state("deadline") != time)
      return trigger_result::continue_;
    ctx.clear_partitioned_state("deadline");
    return trigger_result::fire_and_purge;
  }
  trigger_result on_event_time(std::int64_t, const time_window&, trigger_context&) override {
    return trigger_result::continue_;
  }
  void clear(const time_window&, trigger_context& ctx) override {
    if (auto deadline = ctx.get_int64_state("deadline"))
      ctx.delete_processing_time_timer(*deadline);
    ctx.clear_partitioned_state("deadline");
  }
};

} // namespace

TEST_CASE("a user trigger keeps its state per key and window and sets processing-time timers") {
  harness h;
  auto s = settings_of(tumbling_event_time_windows::of(1000ms));
  s.window_trigger = std::make_shared<big_or_timeout>();
  open_sum(h, s);
  h.set_processing_time(10);
  h.process_element({"a", 1}, 5);
  h.process_element({"b", 2}, 5);
  h.process_element({"a", 100}, 6); // fires a's window at once
  CHECK(h.take_records() == fired{at("a", 101, 999)});
  h.set_processing_time(59);
  CHECK(h.take_records().empty());
  h.set_processing_time(60); // the deadline of both windows (a's deadline stayed)
  auto out = h.take_records();
  CHECK(out == fired{at("b", 2, 999)});
  // The window's cleanup (its end) deletes a deadline still pending.
  h.set_processing_time(100);
  h.process_element({"c", 3}, 7);
  h.process_watermark(999);
  h.set_processing_time(1000);
  CHECK(h.take_records().empty());
  CHECK(dynamic_cast<window_operator<std::string,
                                     reducing_contents<record, record (*)(const record&, const record&)>,
                                     record, time_window>&>(h.op())
          .num_timers()
        == std::pair<std::size_t, std::size_t>{0, 0});
}
