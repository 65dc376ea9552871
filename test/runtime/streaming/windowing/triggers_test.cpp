#include "runtime/streaming/windowing/continuous_event_time_trigger.hpp"
#include "runtime/streaming/windowing/count_trigger.hpp"
#include "runtime/streaming/windowing/default_trigger.hpp"
#include "runtime/streaming/windowing/event_time_trigger.hpp"
#include "runtime/streaming/windowing/global_windows.hpp"
#include "runtime/streaming/windowing/never_trigger.hpp"
#include "runtime/streaming/windowing/processing_time_trigger.hpp"
#include "runtime/streaming/windowing/purging_trigger.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"

#include "test/runtime/streaming/windowing/fake_trigger_context.hpp"

#include <doctest/doctest.h>

#include <chrono>

using namespace flint::streaming;
using namespace std::chrono_literals;
using flint::streaming::test::fake_trigger_context;
using calls = std::vector<std::string>;

namespace {

constexpr auto cont = trigger_result::continue_;
constexpr auto fire = trigger_result::fire;
constexpr auto fire_and_purge = trigger_result::fire_and_purge;

/// A user trigger: fires for an element above a threshold, purges at the window's end.
class threshold_trigger final : public trigger<int, time_window> {
public:
  trigger_result on_element(const int& element, std::int64_t, const time_window& window,
                            trigger_context& ctx) override {
    ctx.register_event_time_timer(window.max_timestamp());
    return element > 100 ? trigger_result::fire : trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const time_window&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_event_time(std::int64_t, const time_window&, trigger_context&) override {
    return trigger_result::purge;
  }
  void clear(const time_window& window, trigger_context& ctx) override {
    ctx.delete_event_time_timer(window.max_timestamp());
  }
  std::string to_string() const override { return "ThresholdTrigger()"; }
};

} // namespace

TEST_CASE("trigger results tell firing and purging apart") {
  CHECK_FALSE(is_fire(cont));
  CHECK_FALSE(is_purge(cont));
  CHECK(is_fire(fire));
  CHECK_FALSE(is_purge(fire));
  CHECK(is_purge(trigger_result::purge));
  CHECK_FALSE(is_fire(trigger_result::purge));
  CHECK(is_fire(fire_and_purge));
  CHECK(is_purge(fire_and_purge));
  CHECK(std::string(to_string(fire_and_purge)) == "FIRE_AND_PURGE");
}

TEST_CASE("event-time trigger: a timer at the window's end fires it") {
  auto t = event_time_trigger<int>::create();
  fake_trigger_context ctx;
  ctx.window = {0, 10};
  ctx.watermark = 3;
  CHECK(t->on_element(1, 5, ctx.window, ctx) == cont);
  CHECK(t->on_element(2, 7, ctx.window, ctx) == cont);
  CHECK(ctx.event_timers == std::set<std::int64_t>{9});
  CHECK(t->on_event_time(8, ctx.window, ctx) == cont);
  CHECK(t->on_processing_time(9, ctx.window, ctx) == cont);
  CHECK(t->on_event_time(9, ctx.window, ctx) == fire);
  t->clear(ctx.window, ctx);
  CHECK(ctx.event_timers.empty());
  CHECK(t->to_string() == "EventTimeTrigger()");
}

TEST_CASE("event-time trigger: an element of a window the watermark passed fires at once") {
  auto t = event_time_trigger<int>::create();
  fake_trigger_context ctx;
  ctx.window = {0, 10};
  ctx.watermark = 9;
  CHECK(t->on_element(1, 4, ctx.window, ctx) == fire);
  CHECK(ctx.calls.empty());
}

TEST_CASE("event-time trigger: a merged window gets a timer unless the watermark passed it") {
  auto t = event_time_trigger<int>::create();
  REQUIRE(t->can_merge());
  fake_trigger_context ctx;
  ctx.window = {0, 20};
  ctx.watermark = 5;
  t->on_merge(ctx.window, ctx);
  CHECK(ctx.calls == calls{"+event 19"});
  ctx.watermark = 19;
  ctx.calls.clear();
  t->on_merge(ctx.window, ctx);
  CHECK(ctx.calls.empty());
}

TEST_CASE("processing-time trigger: fires by the clock at the window's end") {
  auto t = processing_time_trigger<int>::create();
  fake_trigger_context ctx;
  ctx.window = {100, 200};
  ctx.processing_time = 150;
  CHECK(t->on_element(1, 0, ctx.window, ctx) == cont);
  CHECK(ctx.processing_timers == std::set<std::int64_t>{199});
  CHECK(t->on_event_time(199, ctx.window, ctx) == cont);
  CHECK(t->on_processing_time(199, ctx.window, ctx) == fire);
  t->clear(ctx.window, ctx);
  CHECK(ctx.processing_timers.empty());

  ctx.calls.clear();
  t->on_merge({100, 300}, ctx);
  ctx.processing_time = 400;
  t->on_merge({100, 300}, ctx);
  CHECK(ctx.calls == calls{"+processing 299"});
}

TEST_CASE("count trigger: fires every n elements of a window, counting per window") {
  auto t = count_trigger<int>::of(3);
  fake_trigger_context ctx;
  time_window a{0, 10};
  time_window b{10, 20};
  ctx.window = a;
  CHECK(t->on_element(1, 0, a, ctx) == cont);
  CHECK(t->on_element(1, 0, a, ctx) == cont);
  ctx.window = b;
  CHECK(t->on_element(1, 0, b, ctx) == cont);
  ctx.window = a;
  CHECK(t->on_element(1, 0, a, ctx) == fire);
  // Counting starts again after a firing.
  CHECK_FALSE(ctx.int64_state(a, "count"));
  CHECK(t->on_element(1, 0, a, ctx) == cont);
  CHECK(ctx.int64_state(a, "count") == 1);
  CHECK(ctx.int64_state(b, "count") == 1);
  CHECK(t->on_event_time(9, a, ctx) == cont);
  CHECK(t->on_processing_time(9, a, ctx) == cont);
  t->clear(a, ctx);
  CHECK_FALSE(ctx.int64_state(a, "count"));
  CHECK(ctx.calls.empty());
  CHECK(t->to_string() == "CountTrigger(3)");
}

TEST_CASE("count trigger: merged windows add their counts") {
  auto t = count_trigger<int>::of(4);
  fake_trigger_context ctx;
  time_window a{0, 10};
  time_window b{5, 15};
  ctx.window = a;
  t->on_element(1, 0, a, ctx);
  t->on_element(1, 0, a, ctx);
  ctx.window = b;
  t->on_element(1, 0, b, ctx);
  time_window merged{0, 15};
  ctx.window = merged;
  ctx.merged_windows = {a, b};
  REQUIRE(t->can_merge());
  t->on_merge(merged, ctx);
  CHECK(ctx.int64_state(merged, "count") == 3);
  CHECK_FALSE(ctx.int64_state(a, "count"));
  CHECK_FALSE(ctx.int64_state(b, "count"));
  CHECK(t->on_element(1, 0, merged, ctx) == fire);
}

TEST_CASE("purging trigger: every firing of the nested trigger also purges") {
  auto t = purging_trigger<int>::of(count_trigger<int>::of(2));
  fake_trigger_context ctx;
  ctx.window = {0, 10};
  CHECK(t->on_element(1, 0, ctx.window, ctx) == cont);
  CHECK(t->on_element(1, 0, ctx.window, ctx) == fire_and_purge);
  CHECK(t->to_string() == "PurgingTrigger(CountTrigger(2))");
  CHECK(t->can_merge());

  auto by_time = purging_trigger<int>::of(event_time_trigger<int>::create());
  ctx.watermark = 0;
  CHECK(by_time->on_element(1, 0, ctx.window, ctx) == cont);
  CHECK(by_time->on_event_time(5, ctx.window, ctx) == cont);
  CHECK(by_time->on_event_time(9, ctx.window, ctx) == fire_and_purge);
  by_time->clear(ctx.window, ctx);
  CHECK(ctx.event_timers.empty());
}

TEST_CASE("continuous event-time trigger: fires every interval and at the window's end") {
  auto t = continuous_event_time_trigger<int>::of(1s);
  fake_trigger_context ctx;
  time_window w{0, 10'000};
  ctx.window = w;
  ctx.watermark = 0;
  CHECK(t->on_element(1, 1'500, w, ctx) == cont);
  CHECK(ctx.calls == calls{"+event 9999", "+event 2000"});
  CHECK(ctx.int64_state(w, "fire-time") == 2'000);
  // A later element keeps the fire time it has.
  CHECK(t->on_element(1, 3'700, w, ctx) == cont);
  CHECK(ctx.int64_state(w, "fire-time") == 2'000);

  CHECK(t->on_event_time(1'999, w, ctx) == cont);
  CHECK(t->on_event_time(2'000, w, ctx) == fire);
  CHECK(ctx.int64_state(w, "fire-time") == 3'000);
  CHECK(ctx.event_timers.count(3'000) == 1);
  CHECK(t->on_processing_time(3'000, w, ctx) == cont);

  // The last early firing is at the end, not past it.
  ctx.put_int64_state("fire-time", 9'000);
  CHECK(t->on_event_time(9'000, w, ctx) == fire);
  CHECK(ctx.int64_state(w, "fire-time") == 9'999);
  CHECK(t->on_event_time(9'999, w, ctx) == fire);

  ctx.calls.clear();
  t->clear(w, ctx);
  CHECK(ctx.calls == calls{"-event 9999"});
  CHECK_FALSE(ctx.int64_state(w, "fire-time"));
  CHECK(t->to_string() == "ContinuousEventTimeTrigger(1000)");
  CHECK_THROWS_AS(continuous_event_time_trigger<int>::of(0ms), std::invalid_argument);
}

TEST_CASE("continuous event-time trigger: late elements fire at once, merges keep the earliest") {
  auto t = continuous_event_time_trigger<int>::of(1s);
  fake_trigger_context ctx;
  ctx.window = {0, 10'000};
  ctx.watermark = 10'000;
  CHECK(t->on_element(1, 5, ctx.window, ctx) == fire);
  CHECK(ctx.calls.empty());

  ctx.watermark = 0;
  time_window a{0, 10'000};
  time_window b{5'000, 15'000};
  ctx.window = a;
  t->on_element(1, 4'200, a, ctx);
  ctx.window = b;
  t->on_element(1, 5'100, b, ctx);
  CHECK(ctx.int64_state(a, "fire-time") == 5'000);
  CHECK(ctx.int64_state(b, "fire-time") == 6'000);
  time_window merged{0, 15'000};
  ctx.window = merged;
  ctx.merged_windows = {a, b};
  ctx.calls.clear();
  t->on_merge(merged, ctx);
  CHECK(ctx.int64_state(merged, "fire-time") == 5'000);
  CHECK(ctx.calls == calls{"+event 5000"});
}

TEST_CASE("never trigger and the default triggers of the assigners") {
  auto never = never_trigger<int>::create();
  fake_trigger_context<global_window> ctx;
  CHECK(never->on_element(1, 0, global_window{}, ctx) == cont);
  CHECK(never->on_event_time(INT64_MAX, global_window{}, ctx) == cont);
  CHECK(never->on_processing_time(0, global_window{}, ctx) == cont);

  CHECK(make_default_trigger<int>(global_windows::create())->to_string() == "NeverTrigger()");
  CHECK(make_default_trigger<int>(tumbling_event_time_windows::of(1s))->to_string() ==
        "EventTimeTrigger()");
  CHECK(make_default_trigger<int>(tumbling_processing_time_windows::of(1s))->to_string() ==
        "ProcessingTimeTrigger()");
}

TEST_CASE("a user trigger sees the element") {
  std::unique_ptr<trigger<int, time_window>> t = std::make_unique<threshold_trigger>();
  fake_trigger_context ctx;
  ctx.window = {0, 10};
  CHECK(t->on_element(5, 1, ctx.window, ctx) == cont);
  CHECK(t->on_element(500, 1, ctx.window, ctx) == fire);
  CHECK(t->on_event_time(9, ctx.window, ctx) == trigger_result::purge);
  CHECK_FALSE(t->can_merge());
  CHECK_THROWS_AS(t->on_merge(ctx.window, ctx), std::logic_error);
}
