// Event time end to end: an out-of-order click stream (shuffled within a bounded delay, made by
// the test) gets timestamps and watermarks at its source, crosses a keyBy exchange (local
// channels, then remote ones between two TaskExecutors) with its timestamps and watermarks, and
// a keyed process function counts each user's clicks per second of event time with event-time
// timers. Results equal a count over the sorted input. A harness drives the same function's
// processing-time timers by hand.

#include "operator_test_harness.hpp"
#include "api/data_generator_source.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace {

struct click {
  std::int64_t user = 0;
  std::int64_t at = 0;
  bool operator==(const click&) const = default;
};
FLINT_RECORD(click, user, at);

/// (user, second's end, clicks, the largest watermark seen before firing)
using window_count = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

constexpr std::int64_t bound_ms = 300;

/// 20'000 clicks of 13 users over ~40 s of event time, each displaced by up to `bound_ms`.
std::vector<click> clicks() {
  std::mt19937_64 rng(42);
  std::vector<click> out;
  std::int64_t t = 1'000'000;
  for (int i = 0; i < 20000; ++i) {
    t += static_cast<std::int64_t>(rng() % 4);
    out.push_back({static_cast<std::int64_t>(rng() % 13), t});
  }
  // Bounded disorder: each click may move earlier in the stream by up to bound_ms of event time.
  std::vector<std::pair<std::int64_t, click>> keyed;
  for (const auto& c : out)
    keyed.emplace_back(c.at - static_cast<std::int64_t>(rng() % bound_ms), c);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.clear();
  for (auto& [k, c] : keyed)
    out.push_back(c);
  return out;
}

std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> expected_counts() {
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> out;
  for (const auto& c : clicks())
    ++out[{c.user, c.at / 1000 * 1000 + 999}];
  return out;
}

/// Counts per second in a map state keyed by the second's end; an event-time timer at that end
/// emits and clears it. A click whose second already fired would be late: it throws, as the
/// watermark bound must keep every click in time.
struct per_second_count : api::keyed_process_function<std::int64_t, click, window_count> {
  std::optional<api::map_state<std::int64_t, std::int64_t>> counts;
  void open(api::keyed_context<std::int64_t>& ctx) override {
    counts.emplace(ctx.get_map_state<std::int64_t, std::int64_t>("counts"));
  }
  void process_element(const click& c, api::keyed_context<std::int64_t>& ctx,
                       api::collector<window_count>&) override {
    auto ts = ctx.timestamp();
    if (!ts || *ts != c.at)
      throw std::logic_error("a click without its event timestamp");
    auto end = c.at / 1000 * 1000 + 999;
    if (end <= ctx.timer_service().current_watermark())
      throw std::logic_error("a late click: the watermark passed its second");
    counts->put(end, counts->get(end).value_or(0) + 1);
    ctx.timer_service().register_event_time_timer(end);
  }
  void on_timer(std::int64_t timestamp, api::keyed_context<std::int64_t>& ctx,
                api::collector<window_count>& out) override {
    if (ctx.time_domain() != api::time_domain::event_time || ctx.timestamp() != timestamp)
      throw std::logic_error("an event-time timer without its time");
    out.collect({ctx.current_key(), timestamp, counts->get(timestamp).value_or(0)});
    counts->remove(timestamp);
  }
};

void run_event_time_job(int parallelism, int task_managers) {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", std::to_string(parallelism)}, {"pipeline.auto-watermark-interval", "5 ms"}});
  auto counted = env.from_collection(clicks())
                   .assign_timestamps_and_watermarks(
                     api::watermark_strategy<click>::for_bounded_out_of_orderness(
                       std::chrono::milliseconds(bound_ms))
                       .with_timestamp_assigner([](const click& c) { return c.at; }))
                   .key_by([](const click& c) { return c.user; })
                   .process<window_count>(per_second_count{});
  auto into = test::collect(counted);
  auto program = test::graphs_of(env);

  streaming::local_cluster_options options;
  options.task_managers = task_managers;
  options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
  options.remote_channels = task_managers > 1;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> got;
  for (const auto& [user, end, n] : into->values) {
    CHECK_MESSAGE(!got.count({user, end}), "fired twice: user " << user << " at " << end);
    got[{user, end}] = n;
  }
  CHECK(got == expected_counts());
  test::check_resources_released(cluster);
}

} // namespace

TEST_CASE("event time crosses local channels: per-second counts by timers equal the sorted count") {
  run_event_time_job(1, 1);
  run_event_time_job(2, 1);
}

TEST_CASE("event time crosses remote channels: per-second counts by timers equal the sorted count") {
  run_event_time_job(4, 2);
}

namespace {

/// Emits "key@time" from a processing-time timer registered 100 ms after each element.
struct remind_later : api::keyed_process_function<std::string, std::string, std::string> {
  void process_element(const std::string& s, api::keyed_context<std::string>& ctx,
                       api::collector<std::string>&) override {
    auto& timers = ctx.timer_service();
    timers.register_processing_time_timer(timers.current_processing_time() + 100);
    if (s == "cancel")
      timers.delete_processing_time_timer(timers.current_processing_time() + 100);
  }
  void on_timer(std::int64_t t, api::keyed_context<std::string>& ctx,
                api::collector<std::string>& out) override {
    if (ctx.time_domain() != api::time_domain::processing_time || ctx.timestamp())
      throw std::logic_error("a processing-time timer with an event timestamp");
    out.collect(ctx.current_key() + "@" + std::to_string(t));
  }
};

using harness = streaming::test::operator_test_harness<std::string>;

std::unique_ptr<streaming::one_input_operator<std::string>> make_remind(harness& h) {
  return std::make_unique<
    streaming::keyed_process_operator<std::string, std::string, std::string>>(
    std::make_unique<remind_later>(), [](const std::string& s) { return s; }, h.context(),
    h.make_output());
}

} // namespace

TEST_CASE("processing-time timers fire when the clock reaches them, once per key and time") {
  harness h;
  h.open(make_remind(h));
  h.set_processing_time(1000);
  h.process_element("a");
  h.process_element("a"); // the same (key, time): one timer
  h.process_element("b");
  h.set_processing_time(1050);
  h.process_element("c");
  h.process_element("cancel"); // registered and deleted
  h.set_processing_time(1099);
  CHECK(h.take_records().empty());
  h.set_processing_time(1100);
  auto fired = h.take_records();
  REQUIRE(fired.size() == 2);
  // Timers of one time fire in key-group order, not the order of registration.
  std::vector<std::string> names{fired[0].value, fired[1].value};
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a@1100", "b@1100"});
  CHECK_FALSE(fired[0].timestamp);
  h.set_processing_time(2000);
  fired = h.take_records();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].value == "c@1150");
}

TEST_CASE("event-time timers fire at the watermark in time order and carry their time") {
  struct at_times : api::keyed_process_function<std::string, std::string, std::string> {
    void process_element(const std::string& s, api::keyed_context<std::string>& ctx,
                         api::collector<std::string>&) override {
      ctx.timer_service().register_event_time_timer(*ctx.timestamp() + 10);
      if (s == "z")
        ctx.timer_service().delete_event_time_timer(*ctx.timestamp() + 10);
    }
    void on_timer(std::int64_t t, api::keyed_context<std::string>& ctx,
                  api::collector<std::string>& out) override {
      out.collect(ctx.current_key() + "@" + std::to_string(t));
    }
  };
  harness h;
  h.open(std::make_unique<streaming::keyed_process_operator<std::string, std::string, std::string>>(
    std::make_unique<at_times>(), [](const std::string& s) { return s; }, h.context(),
    h.make_output()));
  h.process_element("b", 50);
  h.process_element("a", 20);
  h.process_element("z", 5);
  h.process_watermark(40);
  auto fired = h.take_records();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].value == "a@30");
  CHECK(fired[0].timestamp == std::optional<std::int64_t>(30));
  CHECK(h.emitted().watermarks == std::vector<std::int64_t>{40});
  h.end_input();
  fired = h.take_records();
  REQUIRE(fired.size() == 1);
  CHECK(fired[0].value == "b@60");
  CHECK(h.emitted().watermarks.back() == streaming::max_watermark);
}

namespace {

/// Emits `count` clicks, then nothing, without ending: its output goes idle.
class quiet_after_source final : public streaming::source_operator {
public:
  quiet_after_source(int count, const streaming::operator_context& ctx)
    : count_(count),
      out_(streaming::make_output<click>(ctx)) {}
  streaming::source_status emit_next(std::size_t) override {
    while (emitted_ < count_)
      out_->collect({emitted_ % 3, 1000 + emitted_++});
    return streaming::source_status::nothing_available;
  }

private:
  int count_;
  int emitted_ = 0;
  streaming::output_ref<click> out_;
};

class quiet_after_factory final : public api::named_operator_factory {
public:
  explicit quiet_after_factory(int count) : api::named_operator_factory("source.quiet"), count_(count) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<quiet_after_source>(count_, ctx);
  }

private:
  int count_;
};

struct pass_clicks : api::keyed_process_function<std::int64_t, click, click> {
  void process_element(const click& c, api::keyed_context<std::int64_t>&,
                       api::collector<click>& out) override {
    out.collect(c);
  }
};

} // namespace

TEST_CASE("the trace records an input going idle and the channel that holds the watermark back") {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", "2"}, {"pipeline.auto-watermark-interval", "10 ms"}});
  auto t = env.new_transformation(graph::transformation_kind::source, "Quiet", 2);
  t->set_factory(std::make_shared<quiet_after_factory>(20));
  t->set_chaining_strategy(graph::chaining_strategy::head);
  env.add_operator(t);
  auto stamped = api::data_stream<click>(&env, t).assign_timestamps_and_watermarks(
    api::watermark_strategy<click>::for_monotonous_timestamps()
      .with_timestamp_assigner([](const click& c) { return c.at; })
      .with_idleness(50ms));
  test::collect(stamped.key_by([](const click& c) { return c.user; })
                  .process<click>(pass_clicks{}));
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 4;
  streaming::local_cluster cluster(options);
  REQUIRE(cluster.submit(program.stream, program.job));
  // Both source subtasks go quiet: each consumer sees its channels go idle, then its input.
  auto find = [&](const std::string& needle) {
    for (const auto& r : cluster.recorder().snapshot())
      if (r.method == "watermark_status" && r.detail.find(needle) != std::string::npos
          && r.from.find(program.job->job_id.to_string()) != std::string::npos)
        return true;
    return false;
  };
  for (int wait = 0; wait < 3000 && !find("the task's input is idle"); ++wait)
    std::this_thread::sleep_for(10ms);
  CHECK(find("went IDLE"));
  CHECK(find("every input channel is IDLE: the task's input is idle"));
  CHECK(find("from Source: Quiet"));
  REQUIRE(cluster.cancel(program.job->job_id));
  auto result = cluster.result(program.job->job_id, std::chrono::minutes(1));
  REQUIRE(result.has_value());
  CHECK(result->status == graph::job_status::canceled);
}

namespace {

/// (user, clicks) of a window.
struct count_clicks {
  std::tuple<std::int64_t, std::int64_t> create_accumulator() const { return {0, 0}; }
  std::tuple<std::int64_t, std::int64_t> add(const click& c,
                                             std::tuple<std::int64_t, std::int64_t> acc) const {
    return {c.user, std::get<1>(acc) + 1};
  }
  std::tuple<std::int64_t, std::int64_t> get_result(
    const std::tuple<std::int64_t, std::int64_t>& acc) const {
    return acc;
  }
  std::tuple<std::int64_t, std::int64_t> merge(std::tuple<std::int64_t, std::int64_t> a,
                                               std::tuple<std::int64_t, std::int64_t> b) const {
    return {std::get<0>(a), std::get<1>(a) + std::get<1>(b)};
  }
};

/// Clicks one per index, 10 ms of event time apart, counted per user in 1-hour tumbling windows:
/// nothing fires until event time runs to its end.
struct hourly_count {
  std::shared_ptr<test::collected<std::tuple<std::int64_t, std::int64_t>>> counts;
  test::program program;
};

hourly_count hourly_clicks_job() {
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", "2"}, {"pipeline.auto-watermark-interval", "10 ms"}});
  auto clicks = env.from_source(
    api::data_generator_source<click>([](std::int64_t i) { return click{i % 5, i * 10}; },
                                      api::unbounded_count,
                                      api::rate_limiter_strategy::per_second_per_subtask(2000)),
    api::watermark_strategy<click>::for_monotonous_timestamps().with_timestamp_assigner(
      [](const click& c) { return c.at; }),
    "clicks");
  auto counted = clicks.key_by([](const click& c) { return c.user; })
                   .window(api::tumbling_event_time_windows::of(std::chrono::hours(1)))
                   .aggregate(count_clicks{});
  hourly_count out{test::collect(counted), {}};
  out.program = test::graphs_of(env);
  return out;
}

} // namespace

TEST_CASE("stop-with-savepoint keeps open windows in the savepoint; with drain they fire first") {
  for (bool drain : {false, true}) {
    CAPTURE(drain);
    auto job = hourly_clicks_job();
    test::temp_path savepoints(drain ? "stop_drain_savepoints" : "stop_savepoints");
    streaming::local_cluster_options options;
    options.slots_per_task_manager = 4;
    streaming::local_cluster cluster(options);
    REQUIRE(cluster.submit(job.program.stream, job.program.job));
    // Running, with some clicks in the windows.
    for (int wait = 0; wait < 3000; ++wait) {
      auto s = cluster.status(job.program.job->job_id);
      if (s && *s == graph::job_status::running)
        break;
      std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(300ms);
    auto path = cluster.stop_with_savepoint(job.program.job->job_id, savepoints.path.string(), drain);
    if (!path) {
      auto failed = cluster.result(job.program.job->job_id, std::chrono::seconds(5));
      if (failed)
        MESSAGE(failed->failure_cause);
    }
    REQUIRE_MESSAGE(path.has_value(), path.error().to_string());
    auto result = cluster.result(job.program.job->job_id, std::chrono::minutes(1));
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    CHECK(result->status == graph::job_status::finished);
    std::int64_t fired = 0;
    for (const auto& [user, n] : job.counts->values)
      fired += n;
    if (drain)
      CHECK(fired > 0); // the open hour fired before the savepoint
    else
      CHECK(job.counts->values.empty()); // event time stopped: the hour waits in the savepoint
  }
}
