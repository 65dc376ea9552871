// Event time below the windows: the watermark valve over a task's channels, and the
// timestamps-and-watermarks operator driven by a harness with a manual processing clock.

#include "operator_test_harness.hpp"

#include "api/watermark_strategy.hpp"
#include "runtime/streaming/time/status_watermark_valve.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

using namespace flint;
using namespace flint::streaming;
using namespace std::chrono_literals;

TEST_CASE("the valve's watermark is the minimum over its channels and only rises") {
  status_watermark_valve valve(3);
  CHECK_FALSE(valve.on_watermark(0, 10).watermark);
  CHECK_FALSE(valve.on_watermark(1, 5).watermark);
  auto out = valve.on_watermark(2, 7);
  REQUIRE(out.watermark);
  CHECK(*out.watermark == 5);
  CHECK(valve.holding_back() == std::optional<std::size_t>(1));
  out = valve.on_watermark(1, 20);
  REQUIRE(out.watermark);
  CHECK(*out.watermark == 7);
  // A channel going back changes nothing.
  CHECK_FALSE(valve.on_watermark(2, 3).watermark);
  CHECK(valve.input_watermark() == 7);
}

TEST_CASE("an idle channel does not hold the watermark back; reactivated, it counts once caught up") {
  status_watermark_valve valve(2);
  valve.on_watermark(0, 100);
  valve.on_watermark(1, 10);
  CHECK(valve.input_watermark() == 10);
  // Channel 1 goes quiet: channel 0 alone decides.
  auto out = valve.on_watermark_status(1, true);
  REQUIRE(out.watermark);
  CHECK(*out.watermark == 100);
  CHECK_FALSE(out.idle);
  // Active again but behind the output: it must not pull the watermark back.
  out = valve.on_watermark_status(1, false);
  CHECK_FALSE(out.watermark);
  CHECK_FALSE(valve.on_watermark(1, 50).watermark);
  CHECK(valve.input_watermark() == 100);
  // Until it catches up, the other channel alone moves the watermark.
  auto moved = valve.on_watermark(0, 300);
  REQUIRE(moved.watermark);
  CHECK(*moved.watermark == 300);
  CHECK_FALSE(valve.on_watermark(1, 150).watermark);
  // Caught up (>= 300): it holds back again.
  CHECK_FALSE(valve.on_watermark(1, 350).watermark);
  moved = valve.on_watermark(0, 400);
  REQUIRE(moved.watermark);
  CHECK(*moved.watermark == 350);
  CHECK(valve.holding_back() == std::optional<std::size_t>(1));
}

TEST_CASE("every channel idle makes the input idle, flushing the highest watermark") {
  status_watermark_valve valve(2);
  valve.on_watermark(0, 40);
  valve.on_watermark(1, 30);
  CHECK_FALSE(valve.on_watermark_status(0, true).idle);
  auto out = valve.on_watermark_status(1, true);
  REQUIRE(out.idle);
  CHECK(*out.idle);
  CHECK(valve.idle());
  out = valve.on_watermark_status(0, false);
  REQUIRE(out.idle);
  CHECK_FALSE(*out.idle);
  CHECK(valve.input_watermark() == 40);
}

TEST_CASE("an ended channel counts as the maximum watermark") {
  status_watermark_valve valve(2);
  valve.on_watermark(0, 5);
  valve.on_watermark(1, 8);
  auto out = valve.on_channel_ended(0);
  REQUIRE(out.watermark);
  CHECK(*out.watermark == 8);
  out = valve.on_channel_ended(1);
  REQUIRE(out.watermark);
  CHECK(*out.watermark == max_watermark);
}

namespace {

struct click {
  int user = 0;
  std::int64_t at = 0;
};

api::timestamps_and_watermarks_factory<click> factory_of(api::watermark_strategy<click> s) {
  return api::timestamps_and_watermarks_factory<click>(std::move(s));
}

std::unique_ptr<one_input_operator<click>> build(test::operator_test_harness<click>& h,
                                                  api::watermark_strategy<click> strategy) {
  auto factory = factory_of(std::move(strategy));
  auto& ctx = h.context();
  auto clock = [&h] { return h.processing_time(); };
  return std::make_unique<timestamps_and_watermarks_operator<click>>(
    factory.strategy.assigner(), factory.strategy.create_generator(clock), ctx, h.make_output());
}

} // namespace

TEST_CASE("bounded out-of-orderness: timestamps assigned, watermarks every interval at max - bound - 1") {
  test::operator_test_harness<click> h;
  h.open(build(h, api::watermark_strategy<click>::for_bounded_out_of_orderness(100ms)
                    .with_timestamp_assigner([](const click& c) { return c.at; })));
  h.process_element({1, 1000});
  h.process_element({2, 1500});
  h.process_element({3, 1200}); // out of order, within the bound
  auto records = h.take_records();
  REQUIRE(records.size() == 3);
  CHECK(records[0].timestamp == std::optional<std::int64_t>(1000));
  CHECK(records[2].timestamp == std::optional<std::int64_t>(1200));
  CHECK(h.emitted().watermarks.empty()); // periodic: nothing before the interval
  h.set_processing_time(199);
  CHECK(h.emitted().watermarks.empty());
  h.set_processing_time(200);
  REQUIRE(h.emitted().watermarks.size() == 1);
  CHECK(h.emitted().watermarks[0] == 1500 - 100 - 1);
  // No new maximum: the same watermark is not emitted twice.
  h.set_processing_time(400);
  CHECK(h.emitted().watermarks.size() == 1);
  h.process_element({1, 2000});
  h.set_processing_time(600);
  REQUIRE(h.emitted().watermarks.size() == 2);
  CHECK(h.emitted().watermarks[1] == 1899);
}

TEST_CASE("upstream watermarks stop at the assigner; the final one passes") {
  test::operator_test_harness<click> h;
  h.open(build(h, api::watermark_strategy<click>::for_monotonous_timestamps()
                    .with_timestamp_assigner([](const click& c) { return c.at; })));
  h.process_watermark(5000);
  h.process_watermark_status(true);
  CHECK(h.emitted().watermarks.empty());
  CHECK(h.emitted().statuses.empty());
  h.end_input();
  REQUIRE(h.emitted().watermarks.size() == 1);
  CHECK(h.emitted().watermarks[0] == max_watermark);
  // Nothing periodic after the end.
  h.process_element({1, 10});
  h.set_processing_time(1000);
  CHECK(h.emitted().watermarks.size() == 1);
}

TEST_CASE("with idleness: no records for the timeout marks the output idle, the next one active") {
  test::operator_test_harness<click> h;
  h.open(build(h, api::watermark_strategy<click>::for_monotonous_timestamps()
                    .with_timestamp_assigner([](const click& c) { return c.at; })
                    .with_idleness(1000ms)));
  h.process_element({1, 10});
  h.set_processing_time(200);
  REQUIRE(h.emitted().watermarks.size() == 1);
  CHECK(h.emitted().watermarks[0] == 9);
  for (std::int64_t t = 400; t <= 1200; t += 200)
    h.set_processing_time(t);
  REQUIRE(h.emitted().statuses.size() == 1);
  CHECK(h.emitted().statuses[0] == true);
  h.process_element({1, 50});
  REQUIRE(h.emitted().statuses.size() == 2);
  CHECK(h.emitted().statuses[1] == false);
  h.set_processing_time(1400);
  CHECK(h.emitted().watermarks.back() == 49);
}

TEST_CASE("a punctuated generator of the user's emits from on_event") {
  struct every_tenth final : api::watermark_generator<click> {
    void on_event(const click& c, std::int64_t ts, api::watermark_output& out) override {
      if (c.user % 10 == 0)
        out.emit_watermark(ts);
    }
    void on_periodic_emit(api::watermark_output&) override {}
  };
  test::operator_test_harness<click> h;
  h.open(build(h, api::watermark_strategy<click>::for_generator(
                    [] { return std::make_unique<every_tenth>(); })
                    .with_timestamp_assigner([](const click& c, std::int64_t) { return c.at; })));
  for (int i = 1; i <= 25; ++i)
    h.process_element({i, i * 100});
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{1000, 2000});
}

TEST_CASE("without an assigner a record keeps the timestamp it came with") {
  test::operator_test_harness<click> h;
  h.open(build(h, api::watermark_strategy<click>::for_monotonous_timestamps()));
  h.process_element({1, 0}, 777);
  auto records = h.take_records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].timestamp == std::optional<std::int64_t>(777));
}
