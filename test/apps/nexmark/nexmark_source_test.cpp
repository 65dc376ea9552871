// Nexmark's source: subtasks driven by hand (their share of the event numbers, timestamps, the
// 4 s watermark; snapshots restored at another parallelism continue with the next event
// number), then jobs on a MiniCluster at parallelism 1 and 2 that make the same set of events.

#include "apps/nexmark/nexmark_json.hpp"
#include "apps/nexmark/nexmark_source.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::nexmark;
using namespace flint::streaming;

namespace {

/// One source subtask over Nexmark's generator, its clock moved by the test, with what it
/// emitted (events with their timestamps) and its watermarks.
struct nexmark_subtask {
  struct captured final : output<event> {
    explicit captured(nexmark_subtask& s) : s_(s) {}
    void collect(event e) override {
      s_.events.push_back(std::move(e));
      s_.timestamps.push_back(s_.time.has_timestamp ? std::optional(s_.time.timestamp)
                                                    : std::nullopt);
    }
    nexmark_subtask& s_;
  };
  struct forwarder final : watermark_forwarder {
    explicit forwarder(nexmark_subtask& s) : s_(s) {}
    void emit_watermark(std::int64_t w) override { s_.watermarks.push_back(w); }
    void emit_watermark_status(bool) override {}
    nexmark_subtask& s_;
  };

  nexmark_subtask(int subtask, int parallelism, const nexmark_config& config,
                  const state::operator_state_restore* restore = nullptr)
    : clock([this] { return now; }), fwd(*this) {
    ctx.operator_name = "nexmark";
    ctx.subtask_index = subtask;
    ctx.parallelism = parallelism;
    ctx.time = &time;
    ctx.processing_time = &clock;
    ctx.auto_watermark_interval = 200;
    auto strategy = nexmark_watermarks();
    // The generator function and count nexmark_generator_source gives the job's source.
    source = std::make_unique<data_generator_source<event>>(
      [config](std::int64_t n) { return generate(n, config); },
      data_generator_options{config.events_num, 0, 1}, strategy.assigner(),
      [strategy, this] { return strategy.create_generator([this] { return now; }); }, ctx,
      std::make_unique<captured>(*this));
    source->set_watermark_forwarder(&fwd);
    if (restore)
      source->initialize_state(*restore);
    source->open();
  }

  source_status run() {
    auto status = source_status::more_available;
    while (status == source_status::more_available)
      status = source->emit_next(1000);
    return status;
  }

  std::int64_t now = 0;
  element_time time;
  queued_processing_time_service clock;
  operator_context ctx;
  forwarder fwd;
  std::unique_ptr<data_generator_source<event>> source;
  std::vector<event> events;
  std::vector<std::optional<std::int64_t>> timestamps;
  std::vector<std::int64_t> watermarks;
};

state::operator_state_restore restore_of(std::vector<std::vector<char>> entries) {
  state::operator_subtask_state s;
  s.list_entries = std::move(entries);
  return state::operator_state_restore(std::move(s), false, true);
}

/// The events as sorted JSON lines: a multiset that compares whole events.
std::vector<std::string> sorted_lines(const std::vector<event>& events) {
  std::vector<std::string> lines;
  lines.reserve(events.size());
  for (const auto& e : events)
    lines.push_back(to_json_line(e));
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::vector<event> generated(const nexmark_config& config) {
  std::vector<event> all;
  for (std::int64_t n = 0; n < config.events_num; ++n)
    all.push_back(generate(n, config));
  return all;
}

} // namespace

TEST_CASE("a nexmark source subtask makes its share of the event numbers, 4 s watermarks") {
  nexmark_config config;
  config.events_num = 1000;
  config.tps = 100; // 10 ms of event time per event: the watermark visibly lags
  std::vector<event> all;
  for (int subtask = 0; subtask < 3; ++subtask) {
    nexmark_subtask s(subtask, 3, config);
    s.source->emit_next(100);
    REQUIRE(s.events.size() == 100);
    // Subtask i of 3 makes i, i + 3, ... with the events' own times as timestamps.
    for (std::size_t k = 0; k < s.events.size(); ++k) {
      auto n = subtask + 3 * static_cast<std::int64_t>(k);
      CHECK(s.events[k] == generate(n, config));
      CHECK(s.timestamps[k] == std::optional(config.timestamp_for_event(n)));
    }
    s.now = 200;
    s.clock.fire_due(200);
    REQUIRE_FALSE(s.watermarks.empty());
    CHECK(s.watermarks.back() == s.events.back().timestamp() - 4000 - 1);
    CHECK(s.run() == source_status::end_of_input);
    all.insert(all.end(), s.events.begin(), s.events.end());
  }
  CHECK(sorted_lines(all) == sorted_lines(generated(config)));
}

TEST_CASE("a restored nexmark source continues with the next event number at another parallelism") {
  nexmark_config config;
  config.events_num = 3000;
  config.seed = 11;
  // Two subtasks stopped at different points, their positions dealt out to three subtasks (as
  // operator list state is on rescaling).
  std::vector<event> before;
  std::vector<std::vector<char>> entries;
  std::vector<std::int64_t> next_numbers;
  for (int subtask = 0; subtask < 2; ++subtask) {
    nexmark_subtask s(subtask, 2, config);
    auto emitted = subtask == 0 ? 137 : 801;
    s.source->emit_next(static_cast<std::size_t>(emitted));
    REQUIRE(s.events.size() == static_cast<std::size_t>(emitted));
    CHECK(s.events.back() == generate(subtask + 2 * (emitted - 1), config));
    next_numbers.push_back(subtask + 2 * emitted);
    before.insert(before.end(), s.events.begin(), s.events.end());
    for (auto& e : s.source->snapshot_state(1).list_entries)
      entries.push_back(e);
  }
  REQUIRE(entries.size() == 2);
  std::vector<event> after;
  for (int subtask = 0; subtask < 3; ++subtask) {
    std::vector<std::vector<char>> mine;
    for (auto k = static_cast<std::size_t>(subtask); k < entries.size(); k += 3)
      mine.push_back(entries[k]);
    auto restore = restore_of(mine);
    nexmark_subtask s(subtask, 3, config, &restore);
    CHECK(s.source->num_splits() == mine.size());
    CHECK(s.run() == source_status::end_of_input);
    // The first event after the restore is the split's next event number, then every second.
    if (!mine.empty()) {
      auto next = next_numbers[static_cast<std::size_t>(subtask)];
      REQUIRE_FALSE(s.events.empty());
      CHECK(s.events.front() == generate(next, config));
      CHECK(s.events[1] == generate(next + 2, config));
    } else {
      CHECK(s.events.empty());
    }
    after.insert(after.end(), s.events.begin(), s.events.end());
  }
  // Before and after together: every event exactly once.
  CHECK(before.size() + after.size() == 3000);
  before.insert(before.end(), after.begin(), after.end());
  CHECK(sorted_lines(before) == sorted_lines(generated(config)));
}

TEST_CASE("nexmark_source makes the same set of events at parallelism 1 and 2") {
  nexmark_config config;
  config.events_num = 5000;
  config.tps = 1000;
  config.seed = 3;
  auto expected = sorted_lines(generated(config));
  for (int parallelism : {1, 2}) {
    CAPTURE(parallelism);
    api::stream_execution_environment env(api::configuration{
      {"parallelism.default", std::to_string(parallelism)}});
    auto into = test::collect(nexmark_source(env, config));
    auto program = test::graphs_of(env);
    local_cluster_options options;
    options.task_managers = 1;
    options.slots_per_task_manager = parallelism;
    local_cluster cluster(options);
    auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
    CHECK(sorted_lines(into->values) == expected);
  }
}
