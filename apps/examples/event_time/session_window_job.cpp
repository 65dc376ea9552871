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

struct label_session : api::process_window_function<std::int64_t, std::string, std::int64_t> {
  void process(const std::int64_t& user, api::window_context<>& ctx,
               const std::vector<std::int64_t>& counts, api::collector<std::string>& out) override {
    out.collect("user-" + std::to_string(user) + " session "
                + window_text(ctx.window().start, ctx.window().end)
                + " clicks=" + std::to_string(counts.front()));
  }
};

} // namespace

example_flags session_window_flags(const std::vector<std::string>& args) {
  return parse_example_flags(args,
                             {"--count", "--rate", "--output", "--users", "--splits", "--gap-ms",
                              "--disorder-ms", "--bound-ms"},
                             "session_window [--count N] [--rate R] [--output DIR] [--users U] "
                             "[--splits S] [--gap-ms G] [--disorder-ms D] [--bound-ms B]");
}

void build_session_window(api::stream_execution_environment& env, const example_flags& flags) {
  api::data_generator_source<click> source(
    [flags](std::int64_t i) { return session_click_at(i, flags); }, flags.count,
    rate_of(flags, 500));
  source.with_splits_per_subtask(flags.splits);
  auto clicks = env.from_source(source,
                                api::watermark_strategy<click>::for_bounded_out_of_orderness(
                                  std::chrono::milliseconds(flags.bound_ms))
                                  .with_timestamp_assigner([](const click& c) { return c.at; }),
                                "Session Click Generator");
  clicks.uid("session-clicks");
  auto sessions =
    clicks.key_by([](const click& c) { return c.user; })
      .window(api::event_time_session_windows::with_gap(std::chrono::milliseconds(flags.gap_ms)))
      .aggregate(count_clicks{}, label_session{});
  sessions.uid("sessions");
  if (flags.output.empty())
    sessions.print();
  else
    sessions.write_as_text(flags.output + "/sessions").uid("sessions-sink");
}

} // namespace flint::examples
