#include "apps/examples/event_time/event_time_jobs.hpp"
#include "api/windowed_stream.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace flint::examples {

namespace {

struct count_clicks : api::aggregate_function<click, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() override { return 0; }
  std::int64_t add(const click&, std::int64_t acc) override { return acc + 1; }
  std::int64_t get_result(const std::int64_t& acc) override { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) override { return a + b; }
};

/// "user-<id> [start,end) clicks=<n>", and " (late firing <k>)" when a click within the allowed
/// lateness fired the window again (counted in the window's own state).
struct label_window : api::process_window_function<std::int64_t, std::string, std::int64_t> {
  void process(const std::int64_t& user, api::window_context<>& ctx,
               const std::vector<std::int64_t>& counts, api::collector<std::string>& out) override {
    auto firings = ctx.window_state().get_state<std::int64_t>("firings");
    auto earlier = firings.value().value_or(0);
    firings.update(earlier + 1);
    out.collect("user-" + std::to_string(user) + " "
                + window_text(ctx.window().start, ctx.window().end)
                + " clicks=" + std::to_string(counts.front())
                + (earlier > 0 ? " (late firing " + std::to_string(earlier) + ")" : ""));
  }
};

} // namespace

example_flags windowed_clicks_flags(const std::vector<std::string>& args) {
  return parse_example_flags(
    args,
    {"--count", "--rate", "--output", "--users", "--splits", "--window-ms", "--disorder-ms",
     "--bound-ms", "--lateness-ms", "--late-every", "--late-by-ms"},
    "windowed_clicks [--count N] [--rate R] [--output DIR] [--users U] [--splits S] "
    "[--window-ms W] [--disorder-ms D] [--bound-ms B] [--lateness-ms L] [--late-every K] "
    "[--late-by-ms M]");
}

void build_windowed_clicks(api::stream_execution_environment& env, const example_flags& flags) {
  api::data_generator_source<click> source([flags](std::int64_t i) { return click_at(i, flags); },
                                           flags.count, rate_of(flags, 1000));
  source.with_splits_per_subtask(flags.splits);
  auto clicks = env.from_source(source,
                                api::watermark_strategy<click>::for_bounded_out_of_orderness(
                                  std::chrono::milliseconds(flags.bound_ms))
                                  .with_timestamp_assigner([](const click& c) { return c.at; }),
                                "Click Generator");
  clicks.uid("clicks");

  api::output_tag<click> late("late-clicks");
  auto counts =
    clicks.key_by([](const click& c) { return c.user; })
      .window(api::tumbling_event_time_windows::of(std::chrono::milliseconds(flags.window_ms)))
      .allowed_lateness(std::chrono::milliseconds(flags.lateness_ms))
      .side_output_late_data(late)
      .aggregate(count_clicks{}, label_window{});
  counts.uid("click-counts");
  auto late_lines = counts.get_side_output(late).map([](const click& c) {
    return "late user-" + std::to_string(c.user) + " at " + std::to_string(c.at);
  });
  late_lines.uid("late-lines");
  if (flags.output.empty()) {
    counts.print();
    late_lines.print();
  } else {
    counts.write_as_text(flags.output + "/counts").uid("counts-sink");
    late_lines.write_as_text(flags.output + "/late").uid("late-sink");
  }
}

} // namespace flint::examples
