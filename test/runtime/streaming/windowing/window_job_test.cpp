// Windows end to end: an out-of-order stream (shuffled within a bounded delay, made by the test)
// gets timestamps and watermarks at its source, crosses a keyBy exchange and is summed in
// tumbling (aggregate + process), sliding (reduce + process) and session (process) windows and
// in one window_all, at parallelism 1, 2 and 4, on local channels and on remote ones between two
// TaskExecutors, in the hashmap and the RocksDB backend. Every result equals an independent
// computation over the sorted input; every window fires once.

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace {

struct event {
  std::int64_t user = 0;
  std::int64_t at = 0;
  std::int64_t value = 0;
  bool operator==(const event&) const = default;
};
FLINT_RECORD(event, user, at, value);

/// (key, window max timestamp, sum of values)
using result = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
using results = std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t>;

constexpr std::int64_t bound_ms = 200;
constexpr std::int64_t session_gap_ms = 40;

/// 12'000 events of 11 users over ~20 s of event time with pauses (so sessions end), each
/// displaced by up to `bound_ms`.
std::vector<event> events() {
  std::mt19937_64 rng(7);
  std::vector<event> sorted;
  std::int64_t t = 5'000'000;
  for (int i = 0; i < 12000; ++i) {
    t += static_cast<std::int64_t>(rng() % 3);
    if (rng() % 400 == 0)
      t += 150;
    sorted.push_back({static_cast<std::int64_t>(rng() % 11), t,
                      static_cast<std::int64_t>(rng() % 100)});
  }
  std::vector<std::pair<std::int64_t, event>> keyed;
  for (const auto& e : sorted)
    keyed.emplace_back(e.at - static_cast<std::int64_t>(rng() % bound_ms), e);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<event> out;
  for (auto& [k, e] : keyed)
    out.push_back(e);
  return out;
}

std::vector<event> sorted_events() {
  auto all = events();
  std::stable_sort(all.begin(), all.end(),
                   [](const event& a, const event& b) { return a.at < b.at; });
  return all;
}

results expected_tumbling() {
  results out;
  for (const auto& e : sorted_events())
    out[{e.user, e.at / 1000 * 1000 + 999}] += e.value;
  return out;
}

results expected_sliding() {
  results out;
  for (const auto& e : sorted_events())
    for (std::int64_t start = e.at / 500 * 500; start > e.at - 2000; start -= 500)
      out[{e.user, start + 2000 - 1}] += e.value;
  return out;
}

results expected_sessions() {
  results out;
  std::map<std::int64_t, std::vector<event>> per_user;
  for (const auto& e : sorted_events())
    per_user[e.user].push_back(e);
  for (const auto& [user, list] : per_user) {
    std::int64_t sum = 0;
    std::int64_t last = list.front().at;
    for (const auto& e : list) {
      if (e.at - last > session_gap_ms) {
        out[{user, last + session_gap_ms - 1}] = sum;
        sum = 0;
      }
      sum += e.value;
      last = e.at;
    }
    out[{user, last + session_gap_ms - 1}] = sum;
  }
  return out;
}

results expected_all() {
  results out;
  for (const auto& e : sorted_events())
    out[{-1, e.at / 1000 * 1000 + 999}] += e.value;
  return out;
}

struct sum_values : api::aggregate_function<event, std::int64_t, std::int64_t> {
  std::int64_t create_accumulator() override { return 0; }
  std::int64_t add(const event& e, std::int64_t acc) override { return acc + e.value; }
  std::int64_t get_result(const std::int64_t& acc) override { return acc; }
  std::int64_t merge(std::int64_t a, std::int64_t b) override { return a + b; }
};

/// Pairs a pre-aggregated value with its key and window.
template <class In>
struct label : api::process_window_function<In, result, std::int64_t> {
  void process(const std::int64_t& key, api::window_context<>& ctx, const std::vector<In>& in,
               api::collector<result>& out) override {
    if (in.size() != 1)
      throw std::logic_error("a pre-aggregated window with more than one value");
    if (ctx.current_watermark() < ctx.window().max_timestamp())
      throw std::logic_error("an event-time window fired before the watermark passed it");
    if constexpr (std::is_same_v<In, event>)
      out.collect({key, ctx.window().max_timestamp(), in[0].value});
    else
      out.collect({key, ctx.window().max_timestamp(), in[0]});
  }
};

struct session_sum : api::process_window_function<event, result, std::int64_t> {
  void process(const std::int64_t& key, api::window_context<>& ctx, const std::vector<event>& in,
               api::collector<result>& out) override {
    std::int64_t sum = 0;
    for (const auto& e : in)
      sum += e.value;
    out.collect({key, ctx.window().max_timestamp(), sum});
  }
};

struct all_sum : api::process_all_window_function<event, result> {
  void process(api::window_context<>& ctx, const std::vector<event>& in,
               api::collector<result>& out) override {
    std::int64_t sum = 0;
    for (const auto& e : in)
      sum += e.value;
    out.collect({-1, ctx.window().max_timestamp(), sum});
  }
};

results gathered(const std::vector<result>& values) {
  results got;
  for (const auto& [key, end, sum] : values) {
    CHECK_MESSAGE(!got.count({key, end}), "fired twice: key " << key << " at " << end);
    got[{key, end}] = sum;
  }
  return got;
}

void run_windows(int parallelism, int task_managers, const std::string& backend) {
  CAPTURE(parallelism);
  CAPTURE(task_managers);
  CAPTURE(backend);
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", std::to_string(parallelism)},
                       {"pipeline.auto-watermark-interval", "5 ms"},
                       {"state.backend.type", backend}});
  auto timed = env.from_collection(events())
                 .assign_timestamps_and_watermarks(
                   api::watermark_strategy<event>::for_bounded_out_of_orderness(
                     std::chrono::milliseconds(bound_ms))
                     .with_timestamp_assigner([](const event& e) { return e.at; }));
  auto by_user = timed.key_by([](const event& e) { return e.user; });
  auto tumbling = test::collect(
    by_user.window(api::tumbling_event_time_windows::of(1s)).aggregate(sum_values{}, label<std::int64_t>{}));
  auto sliding = test::collect(by_user.window(api::sliding_event_time_windows::of(2s, 500ms))
                                 .reduce(
                                   [](const event& a, const event& b) {
                                     return event{a.user, std::max(a.at, b.at), a.value + b.value};
                                   },
                                   label<event>{}));
  auto sessions = test::collect(
    by_user.window(api::event_time_session_windows::with_gap(std::chrono::milliseconds(session_gap_ms)))
      .process(session_sum{}));
  auto all = test::collect(timed.window_all(api::tumbling_event_time_windows::of(1s)).process(all_sum{}));
  auto program = test::graphs_of(env);

  streaming::local_cluster_options options;
  options.task_managers = task_managers;
  options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
  options.remote_channels = task_managers > 1;
  streaming::local_cluster cluster(options);
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(3));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);

  CHECK(gathered(tumbling->values) == expected_tumbling());
  CHECK(gathered(sliding->values) == expected_sliding());
  CHECK(gathered(sessions->values) == expected_sessions());
  CHECK(gathered(all->values) == expected_all());
  test::check_resources_released(cluster);
}

} // namespace

TEST_CASE("the independent computation sees sessions end and windows of several keys") {
  CHECK(expected_sessions().size() > 2 * 11);
  CHECK(expected_tumbling().size() > 10 * 11);
}

TEST_CASE("out-of-order windows on local channels equal the sorted computation, hashmap backend") {
  run_windows(1, 1, "hashmap");
  run_windows(2, 1, "hashmap");
}

TEST_CASE("out-of-order windows on remote channels equal the sorted computation, hashmap backend") {
  run_windows(4, 2, "hashmap");
}

TEST_CASE("out-of-order windows equal the sorted computation in the rocksdb backend") {
  run_windows(2, 1, "rocksdb");
  run_windows(4, 2, "rocksdb");
}

namespace {

/// Watermark = the largest timestamp so far, after every event (punctuated): which elements are
/// late follows from the input's order alone.
struct every_event : api::watermark_generator<event> {
  std::int64_t max = std::numeric_limits<std::int64_t>::min();
  void on_event(const event&, std::int64_t ts, api::watermark_output& out) override {
    max = std::max(max, ts);
    out.emit_watermark(max);
  }
  void on_periodic_emit(api::watermark_output&) override {}
};

} // namespace

TEST_CASE("late elements reach get_side_output; built-in triggers and evictors spelt without types") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  std::vector<event> input{{1, 100, 1},   {1, 200, 2},   {2, 150, 10},  {1, 1500, 4},
                           {1, 300, 8},   {1, 1700, 16}, {2, 2500, 20}, {1, 1100, 32},
                           {1, 2600, 64}};
  auto timed = env.from_collection(input).assign_timestamps_and_watermarks(
    api::watermark_strategy<event>::for_generator([] { return std::make_unique<every_event>(); })
      .with_timestamp_assigner([](const event& e) { return e.at; }));
  api::output_tag<event> late("late");
  auto sums = timed.key_by([](const event& e) { return e.user; })
                .window(api::tumbling_event_time_windows::of(1s))
                .trigger(api::event_time_trigger::create())
                .side_output_late_data(late)
                .reduce([](const event& a, const event& b) {
                  return event{a.user, std::max(a.at, b.at), a.value + b.value};
                });
  auto as_tuple = [](const event& e) { return result{e.user, e.at, e.value}; };
  auto main_out = test::collect(sums.map(as_tuple));
  auto late_out = test::collect(sums.get_side_output(late).map(as_tuple));
  // Every 3 elements of all users, the last 2 of them summed (count trigger, purging, evictor).
  auto counted = test::collect(timed.window_all(api::global_windows::create())
                                 .trigger(api::purging_trigger::of(api::count_trigger::of(3)))
                                 .evictor(api::count_evictor::of(2))
                                 .reduce([](const event& a, const event& b) {
                                   return event{0, std::max(a.at, b.at), a.value + b.value};
                                 })
                                 .map(as_tuple));
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);

  auto sorted_of = [](std::vector<result> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  // Window [0, 1000) of user 1 fired at watermark 1500: 300 came too late; [1000, 2000) fired at
  // 2500: 1100 too.
  CHECK(sorted_of(main_out->values)
        == std::vector<result>{{1, 200, 3}, {1, 1700, 20}, {1, 2600, 64}, {2, 150, 10}, {2, 2500, 20}});
  CHECK(sorted_of(late_out->values) == std::vector<result>{{1, 300, 8}, {1, 1100, 32}});
  CHECK(sorted_of(counted->values)
        == std::vector<result>{{0, 200, 12}, {0, 1700, 24}, {0, 2600, 96}});
}

namespace {

struct count_and_sum {
  std::pair<std::int64_t, std::int64_t> create_accumulator() { return {0, 0}; }
  std::pair<std::int64_t, std::int64_t> add(const event& e,
                                            std::pair<std::int64_t, std::int64_t> acc) {
    return {acc.first + 1, acc.second + e.value};
  }
  std::int64_t get_result(const std::pair<std::int64_t, std::int64_t>& acc) {
    return acc.first * 1000 + acc.second;
  }
  std::pair<std::int64_t, std::int64_t> merge(std::pair<std::int64_t, std::int64_t> a,
                                              std::pair<std::int64_t, std::int64_t> b) {
    return {a.first + b.first, a.second + b.second};
  }
};

} // namespace

TEST_CASE("apply, aggregate with an evictor and window_all's apply run through the API") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  std::vector<event> input{{1, 10, 1}, {1, 20, 2}, {1, 30, 4}, {2, 40, 8}, {1, 1010, 16}};
  auto timed = env.from_collection(input).assign_timestamps_and_watermarks(
    api::watermark_strategy<event>::for_generator([] { return std::make_unique<every_event>(); })
      .with_timestamp_assigner([](const event& e) { return e.at; }));
  auto by_user = timed.key_by([](const event& e) { return e.user; });
  auto applied = test::collect(
    by_user.window(api::tumbling_event_time_windows::of(1s))
      .apply<result>([](const std::int64_t& user, const api::time_window& w,
                        const std::vector<event>& in, api::collector<result>& out) {
        std::int64_t sum = 0;
        for (const auto& e : in)
          sum += e.value;
        out.collect({user, w.max_timestamp(), sum});
      }));
  // The time evictor keeps the last 15 ms before the newest element: 20 and 30 of user 1.
  auto evicted = test::collect(by_user.window(api::tumbling_event_time_windows::of(1s))
                                 .evictor(api::time_evictor::of(15ms))
                                 .aggregate(count_and_sum{})
                                 .map([](std::int64_t v) { return result{0, 0, v}; }));
  auto all = test::collect(
    timed.window_all(api::tumbling_event_time_windows::of(1s))
      .apply<result>([](const api::time_window& w, const std::vector<event>& in,
                        api::collector<result>& out) {
        out.collect({-1, w.max_timestamp(), static_cast<std::int64_t>(in.size())});
      }));
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);
  auto sorted_of = [](std::vector<result> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted_of(applied->values)
        == std::vector<result>{{1, 999, 7}, {1, 1999, 16}, {2, 999, 8}});
  CHECK(sorted_of(evicted->values)
        == std::vector<result>{{0, 0, 1008}, {0, 0, 1016}, {0, 0, 2006}});
  CHECK(sorted_of(all->values) == std::vector<result>{{-1, 999, 4}, {-1, 1999, 1}});
}

TEST_CASE("count windows: tumbling every n records per key, sliding the last n every m") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  std::vector<std::int64_t> input;
  for (std::int64_t i = 1; i <= 20; ++i)
    input.push_back(i);
  auto by_parity = env.from_collection(input).key_by([](const std::int64_t& v) { return v % 2; });
  auto sums = [](const std::int64_t& key, const api::global_window&,
                 const std::vector<std::int64_t>& in, api::collector<std::tuple<std::int64_t, std::int64_t>>& out) {
    std::int64_t sum = 0;
    for (auto v : in)
      sum += v;
    out.collect({key, sum});
  };
  auto tumbling = test::collect(
    by_parity.count_window(4).apply<std::tuple<std::int64_t, std::int64_t>>(sums));
  auto sliding = test::collect(
    by_parity.count_window(3, 2).apply<std::tuple<std::int64_t, std::int64_t>>(sums));
  // One subtask source: each key's records arrive in order.
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  std::multiset<std::tuple<std::int64_t, std::int64_t>> got_t(tumbling->values.begin(),
                                                              tumbling->values.end());
  // Odd: 1+3+5+7, 9+11+13+15 (17, 19 never fill a window); even likewise.
  CHECK(got_t == std::multiset<std::tuple<std::int64_t, std::int64_t>>{
                   {1, 16}, {1, 48}, {0, 20}, {0, 52}});
  std::multiset<std::tuple<std::int64_t, std::int64_t>> got_s(sliding->values.begin(),
                                                              sliding->values.end());
  // Every 2nd record of a key, the sum of its last 3 (or fewer at first).
  std::multiset<std::tuple<std::int64_t, std::int64_t>> want_s;
  for (std::int64_t key : {0, 1}) {
    std::vector<std::int64_t> seen;
    for (auto v : input)
      if (v % 2 == key) {
        seen.push_back(v);
        if (seen.size() % 2 == 0) {
          std::int64_t sum = 0;
          for (std::size_t i = seen.size() >= 3 ? seen.size() - 3 : 0; i < seen.size(); ++i)
            sum += seen[i];
          want_s.insert({key, sum});
        }
      }
  }
  CHECK(got_s == want_s);
}

// -- two-phase window aggregates (pipeline.window.agg-phase-strategy) ------------------------------

namespace {

/// How many LocalWindowAggregate operators the job has, each checked to be chained behind the
/// timestamps operator (the window's input), never at a chain's head.
int local_aggregates(const graph::job_graph& job) {
  int n = 0;
  for (const auto& v : job.vertices)
    for (const auto& op : v.operators)
      if (op.name == "LocalWindowAggregate") {
        ++n;
        CHECK(op.chain_index > 0);
        // "... -> Timestamps/Watermarks -> LocalWindowAggregate", or with several windows on
        // one input "... -> Timestamps/Watermarks -> (LocalWindowAggregate, ...)".
        CHECK_MESSAGE((v.name.find("Timestamps/Watermarks -> LocalWindowAggregate")
                         != std::string::npos
                       || v.name.find("Timestamps/Watermarks -> (LocalWindowAggregate")
                         != std::string::npos),
                      v.name);
      }
  return n;
}

/// (user, sum) of every window of `expected`, as a multiset.
std::multiset<std::pair<std::int64_t, std::int64_t>> sums_of(const results& expected) {
  std::multiset<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& [key, sum] : expected)
    out.insert({key.first, sum});
  return out;
}

/// Sliding windows of 2 s every 500 ms shifted by 100 ms, summed per user.
results expected_sliding_offset() {
  results out;
  for (const auto& e : sorted_events())
    for (std::int64_t start = (e.at - 100) / 500 * 500 + 100; start > e.at - 2000; start -= 500)
      out[{e.user, start + 2000 - 1}] += e.value;
  return out;
}

/// Tumbling 1 s windows shifted by 300 ms.
results expected_tumbling_offset(bool all) {
  results out;
  for (const auto& e : sorted_events())
    out[{all ? -1 : e.user, (e.at - 300) / 1000 * 1000 + 300 + 999}] += e.value;
  return out;
}

struct sum_by_user : api::aggregate_function<event, std::pair<std::int64_t, std::int64_t>,
                                             std::pair<std::int64_t, std::int64_t>> {
  std::pair<std::int64_t, std::int64_t> create_accumulator() override { return {0, 0}; }
  std::pair<std::int64_t, std::int64_t> add(const event& e,
                                            std::pair<std::int64_t, std::int64_t> acc) override {
    return {e.user, acc.second + e.value};
  }
  std::pair<std::int64_t, std::int64_t> get_result(
    const std::pair<std::int64_t, std::int64_t>& acc) override {
    return acc;
  }
  std::pair<std::int64_t, std::int64_t> merge(std::pair<std::int64_t, std::int64_t> a,
                                              std::pair<std::int64_t, std::int64_t> b) override {
    return {a.first, a.second + b.second};
  }
};

struct all_label : api::process_all_window_function<event, result> {
  void process(api::window_context<>& ctx, const std::vector<event>& in,
               api::collector<result>& out) override {
    if (in.size() != 1)
      throw std::logic_error("a reduced window with more than one value");
    out.collect({-1, ctx.window().max_timestamp(), in[0].value});
  }
};

event add_events(const event& a, const event& b) {
  return event{a.user, std::max(a.at, b.at), a.value + b.value};
}

void run_strategy(int parallelism, const std::string& strategy) {
  CAPTURE(parallelism);
  CAPTURE(strategy);
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", std::to_string(parallelism)},
                       {"pipeline.auto-watermark-interval", "5 ms"},
                       {"pipeline.window.agg-phase-strategy", strategy}});
  auto timed = env.from_collection(events())
                 .assign_timestamps_and_watermarks(
                   api::watermark_strategy<event>::for_bounded_out_of_orderness(
                     std::chrono::milliseconds(bound_ms))
                     .with_timestamp_assigner([](const event& e) { return e.at; }));
  auto by_user = timed.key_by([](const event& e) { return e.user; });
  // aggregate + process, tumbling.
  auto tumbling = test::collect(by_user.window(api::tumbling_event_time_windows::of(1s))
                                  .aggregate(sum_values{}, label<std::int64_t>{}));
  // aggregate alone, tumbling with an offset.
  auto tumbling_offset = test::collect(
    by_user.window(api::tumbling_event_time_windows::of(1s, 300ms)).aggregate(sum_by_user{}));
  // reduce + process, sliding with an offset.
  auto sliding = test::collect(by_user.window(api::sliding_event_time_windows::of(2s, 500ms, 100ms))
                                 .reduce(&add_events, label<event>{}));
  // reduce alone, sliding.
  auto sliding_plain = test::collect(
    by_user.window(api::sliding_event_time_windows::of(2s, 500ms)).reduce(&add_events));
  // window_all: aggregate, and reduce + process.
  auto all_aggregated = test::collect(
    timed.window_all(api::tumbling_event_time_windows::of(1s, 300ms)).aggregate(sum_values{}));
  auto all_reduced = test::collect(timed.window_all(api::tumbling_event_time_windows::of(1s))
                                     .reduce(&add_events, all_label{}));
  auto program = test::graphs_of(env);
  CHECK(local_aggregates(*program.job) == (strategy == "ONE_PHASE" ? 0 : 6));

  streaming::local_cluster_options options;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(3));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);

  CHECK(gathered(tumbling->values) == expected_tumbling());
  CHECK(gathered(sliding->values) == expected_sliding_offset());
  std::multiset<std::pair<std::int64_t, std::int64_t>> got_offset(
    tumbling_offset->values.begin(), tumbling_offset->values.end());
  CHECK(got_offset == sums_of(expected_tumbling_offset(false)));
  std::multiset<std::pair<std::int64_t, std::int64_t>> got_plain;
  for (const auto& e : sliding_plain->values)
    got_plain.insert({e.user, e.value});
  CHECK(got_plain == sums_of(expected_sliding()));
  std::multiset<std::pair<std::int64_t, std::int64_t>> got_all;
  for (auto v : all_aggregated->values)
    got_all.insert({-1, v});
  CHECK(got_all == sums_of(expected_tumbling_offset(true)));
  CHECK(gathered(all_reduced->values) == expected_all());
  test::check_resources_released(cluster);
}

} // namespace

TEST_CASE("two-phase window aggregates equal one phase and the sorted computation") {
  CHECK(expected_sliding_offset() != expected_sliding());
  CHECK(expected_tumbling_offset(false) != expected_tumbling());
  for (int parallelism : {1, 2})
    for (const char* strategy : {"ONE_PHASE", "AUTO", "TWO_PHASE", "two_phase"})
      run_strategy(parallelism, strategy);
}

TEST_CASE("a LocalWindowAggregate goes in only where two phases apply") {
  auto locals = [](const std::string& strategy, auto&& build) {
    api::stream_execution_environment env(
      api::configuration{{"pipeline.window.agg-phase-strategy", strategy}});
    auto timed = env.from_collection(std::vector<event>{{1, 10, 1}})
                   .assign_timestamps_and_watermarks(
                     api::watermark_strategy<event>::for_monotonous_timestamps()
                       .with_timestamp_assigner([](const event& e) { return e.at; }));
    auto by_user = timed.key_by([](const event& e) { return e.user; });
    test::collect(build(timed, by_user).map([](const auto&) { return 0; }));
    auto job = env.get_job_graph();
    REQUIRE(job.has_value());
    return local_aggregates(*job);
  };
  auto tumbling = [](auto&, auto& keyed) {
    return keyed.window(api::tumbling_event_time_windows::of(1s)).reduce(&add_events);
  };
  CHECK(locals("AUTO", tumbling) == 1);
  CHECK(locals("TWO_PHASE", tumbling) == 1);
  CHECK(locals("ONE_PHASE", tumbling) == 0);
  // The default trigger spelt out, and allowed lateness: still two phases.
  CHECK(locals("AUTO", [](auto&, auto& keyed) {
          return keyed.window(api::sliding_event_time_windows::of(2s, 1s))
            .trigger(api::event_time_trigger::create())
            .allowed_lateness(5s)
            .aggregate(sum_values{});
        }) == 1);
  CHECK(locals("AUTO", [](auto& timed, auto&) {
          return timed.window_all(api::tumbling_event_time_windows::of(1s)).aggregate(sum_values{});
        }) == 1);
  // Not with an evictor, another trigger, a late side output, sessions, processing time, or a
  // function over all elements.
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::tumbling_event_time_windows::of(1s))
            .evictor(api::count_evictor::of(2))
            .reduce(&add_events);
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::tumbling_event_time_windows::of(1s))
            .trigger(api::count_trigger::of(2))
            .reduce(&add_events);
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          api::output_tag<event> late("late");
          return keyed.window(api::tumbling_event_time_windows::of(1s))
            .side_output_late_data(late)
            .reduce(&add_events);
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::event_time_session_windows::with_gap(1s)).reduce(&add_events);
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::tumbling_processing_time_windows::of(1s)).reduce(&add_events);
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::tumbling_event_time_windows::of(1s)).process(session_sum{});
        }) == 0);
  CHECK(locals("TWO_PHASE", [](auto& timed, auto&) {
          return timed.window_all(api::tumbling_event_time_windows::of(1s))
            .trigger(api::count_trigger::of(3))
            .aggregate(sum_values{});
        }) == 0);
  // Nor sliding windows with gaps (size < slide): a record in a gap belongs to no window.
  CHECK(locals("TWO_PHASE", [](auto&, auto& keyed) {
          return keyed.window(api::sliding_event_time_windows::of(1s, 2s)).reduce(&add_events);
        }) == 0);
}

// Same ids: a savepoint's state reaches the window's operator under either strategy. The
// slicing operator takes a per-window operator's state; the per-window operator refuses a
// slicing one's (ONE_PHASE after AUTO/TWO_PHASE), naming the strategies that take it: both
// directions in slicing_window_api_test.
TEST_CASE("two phases keep every operator's id, so a savepoint's window state reaches the window "
          "operator under either strategy") {
  auto ids = [](const std::string& strategy) {
    api::stream_execution_environment env(
      api::configuration{{"pipeline.window.agg-phase-strategy", strategy}});
    auto timed = env.from_collection(std::vector<event>{{1, 10, 1}})
                   .assign_timestamps_and_watermarks(
                     api::watermark_strategy<event>::for_monotonous_timestamps()
                       .with_timestamp_assigner([](const event& e) { return e.at; }));
    auto by_user = timed.key_by([](const event& e) { return e.user; });
    test::collect(by_user.window(api::tumbling_event_time_windows::of(1s)).reduce(&add_events));
    test::collect(timed.map([](const event& e) { return e.value; }).name("beside"));
    auto job = env.get_job_graph();
    REQUIRE(job.has_value());
    std::map<std::string, graph::operator_id> out;
    for (const auto& v : job->vertices)
      for (const auto& op : v.operators)
        out.emplace(op.name, op.id);
    return out;
  };
  auto one = ids("ONE_PHASE");
  auto two = ids("AUTO");
  REQUIRE(two.size() == one.size() + 1);
  REQUIRE(two.count("LocalWindowAggregate") == 1);
  for (const auto& [name, id] : one) {
    CAPTURE(name);
    CHECK(two.at(name) == id);
  }
}

TEST_CASE("a partitioning written before key_by does not reach the local phase") {
  // broadcast() before key_by: key_by's exchange wins (as with one phase), so every record is
  // folded once, not once per receiver of the broadcast.
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", "2"},
                       {"pipeline.auto-watermark-interval", "5 ms"}});
  auto timed = env.from_collection(events())
                 .assign_timestamps_and_watermarks(
                   api::watermark_strategy<event>::for_bounded_out_of_orderness(
                     std::chrono::milliseconds(bound_ms))
                     .with_timestamp_assigner([](const event& e) { return e.at; }));
  auto tumbling = test::collect(timed.broadcast()
                                  .key_by([](const event& e) { return e.user; })
                                  .window(api::tumbling_event_time_windows::of(1s))
                                  .aggregate(sum_values{}, label<std::int64_t>{}));
  auto program = test::graphs_of(env);
  CHECK(local_aggregates(*program.job) == 1);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(3));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);
  CHECK(gathered(tumbling->values) == expected_tumbling());
  test::check_resources_released(cluster);
}

TEST_CASE("a bad pipeline.window.agg-phase-strategy is refused naming the key and the values") {
  CHECK_THROWS_WITH_AS(
    api::stream_execution_environment(
      api::configuration{{"pipeline.window.agg-phase-strategy", "THREE_PHASE"}}),
    doctest::Contains("'THREE_PHASE' for key 'pipeline.window.agg-phase-strategy' (AUTO, "
                      "ONE_PHASE or TWO_PHASE)"),
    std::invalid_argument);
  api::stream_execution_environment env(
    api::configuration{{"pipeline.window.agg-phase-strategy", "one_phase"}});
  CHECK(env.window_agg_phase_strategy() == api::agg_phase_strategy::one_phase);
  CHECK(api::stream_execution_environment().window_agg_phase_strategy()
        == api::agg_phase_strategy::automatic);
}

namespace {

/// What the task asked of the operator, in order: "prepare <id>", "snapshot <id>".
struct call_log {
  std::mutex mutex;
  std::vector<std::string> calls;
};

class recording_operator final : public streaming::one_input_operator<std::string> {
public:
  recording_operator(std::shared_ptr<call_log> log, std::unique_ptr<streaming::output<std::string>> out)
    : log_(std::move(log)),
      out_(std::move(out)) {}
  void process_element(const std::string& value) override { out_->collect_ref(value); }
  void prepare_snapshot_pre_barrier(std::int64_t id) override {
    std::lock_guard lock(log_->mutex);
    log_->calls.push_back("prepare " + std::to_string(id));
  }
  state::operator_snapshot snapshot_state(std::int64_t id) override {
    std::lock_guard lock(log_->mutex);
    log_->calls.push_back("snapshot " + std::to_string(id));
    return {};
  }

private:
  std::shared_ptr<call_log> log_;
  streaming::output_ref<std::string> out_;
};

class recording_factory final : public api::named_operator_factory {
public:
  explicit recording_factory(std::shared_ptr<call_log> log)
    : api::named_operator_factory("map"),
      log_(std::move(log)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<recording_operator>(log_, streaming::make_output<std::string>(ctx));
  }

private:
  std::shared_ptr<call_log> log_;
};

} // namespace

TEST_CASE("the task calls prepare_snapshot_pre_barrier on its operators before their snapshots") {
  // A committing file sink makes the task wait for a checkpoint after its input ended: at least
  // that one runs through the chain's operators.
  test::temp_path output("window_pre_barrier_out");
  api::stream_execution_environment env(
    api::configuration{{"execution.checkpointing.interval", "20 ms"}});
  auto log = std::make_shared<call_log>();
  env.from_collection(std::vector<std::string>{"a", "b", "c"})
    .transform<std::string>("Recording", std::make_shared<recording_factory>(log))
    .write_as_text(output.path.string());
  auto program = test::graphs_of(env);
  streaming::local_cluster cluster(streaming::local_cluster_options{});
  auto ran = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(ran.has_value(), ran.error().to_string());
  REQUIRE_MESSAGE(ran->status == graph::job_status::finished, ran->failure_cause);
  std::lock_guard lock(log->mutex);
  REQUIRE_FALSE(log->calls.empty());
  for (std::size_t i = 0; i < log->calls.size(); ++i) {
    CAPTURE(i);
    if (log->calls[i].starts_with("snapshot ")) {
      REQUIRE(i > 0);
      CHECK(log->calls[i - 1] == "prepare " + log->calls[i].substr(9));
    } else {
      REQUIRE(i + 1 < log->calls.size());
      CHECK(log->calls[i + 1] == "snapshot " + log->calls[i].substr(8));
    }
  }
}
