/// `session_window.so [--count N] [--rate R] [--output DIR] ...`: each user's sessions of clicks
/// in event time (Flink's EventTimeSessionWindows.withGap): a data generator source makes a click
/// every 2 ms of event time by a user who is on line in that second (each user is on line two
/// seconds in three, at random), displaced by up to --disorder-ms (300); watermarks lag by
/// --bound-ms (500). A session closes once its user was quiet for --gap-ms (500): it prints
/// `user-3 session [12000,15998) clicks=412`, or writes such lines into DIR/sessions.
///
/// Runs until cancelled unless --count bounds the clicks; --rate clicks per second in all
/// (default 500, about real time; 0: as fast as it goes).

#include "api/job_entry.hpp"
#include "api/windowed_stream.hpp"
#include "apps/examples/event_time/generated_streams.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace flint;
using examples::click;

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
                + examples::window_text(ctx.window().start, ctx.window().end)
                + " clicks=" + std::to_string(counts.front()));
  }
};

void session_window_main(api::job_context& ctx) {
  const std::string usage = "session_window.so [--count N] [--rate R] [--output DIR] [--users U] "
                            "[--splits S] [--gap-ms G] [--disorder-ms D] [--bound-ms B]";
  auto flags = examples::parse_example_flags(
    ctx.args(),
    {"--count", "--rate", "--output", "--users", "--splits", "--gap-ms", "--disorder-ms",
     "--bound-ms"},
    usage);
  auto& env = ctx.env();
  api::data_generator_source<click> source(
    [flags](std::int64_t i) { return examples::session_click_at(i, flags); }, flags.count,
    examples::rate_of(flags, 500));
  source.with_splits_per_subtask(flags.splits);
  auto clicks = env.from_source(
    source,
    api::watermark_strategy<click>::for_bounded_out_of_orderness(
      std::chrono::milliseconds(flags.bound_ms))
      .with_timestamp_assigner([](const click& c) { return c.at; }),
    "Session Click Generator");
  clicks.uid("session-clicks");
  auto sessions = clicks.key_by([](const click& c) { return c.user; })
                    .window(api::event_time_session_windows::with_gap(
                      std::chrono::milliseconds(flags.gap_ms)))
                    .aggregate(count_clicks{}, label_session{});
  sessions.uid("sessions");
  if (flags.output.empty())
    sessions.print();
  else
    sessions.write_as_text(flags.output + "/sessions").uid("sessions-sink");
  ctx.set_job_name("Session Windows");
}

} // namespace

FLINT_JOB_ENTRY(session_window_main)
