// Window joins (Flink's join/coGroup ... where ... equalTo ... window ... apply): two streams
// with event timestamps, joined per key and tumbling window at -p 2; the pairs and the per-window
// groups equal an independent computation over the inputs.

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

namespace {

struct view {
  std::int64_t user = 0;
  std::int64_t at = 0;
  std::int64_t id = 0;
};
FLINT_RECORD(view, user, at, id);

struct buy {
  std::int64_t user = 0;
  std::int64_t at = 0;
  std::int64_t id = 0;
};
FLINT_RECORD(buy, user, at, id);

template <class T>
std::vector<T> events(std::uint64_t seed, int n, std::int64_t id_base) {
  std::mt19937_64 rng(seed);
  std::vector<T> out;
  std::int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % 5);
    out.push_back({static_cast<std::int64_t>(rng() % 11), t, id_base + i});
  }
  return out;
}

template <class T>
api::data_stream<T> stamped(api::stream_execution_environment& env, const std::vector<T>& in) {
  return env.from_collection(in).assign_timestamps_and_watermarks(
    api::watermark_strategy<T>::for_monotonous_timestamps().with_timestamp_assigner(
      [](const T& e) { return e.at; }));
}

} // namespace

TEST_CASE("a window join pairs the elements of one key and window; co_group gets both lists") {
  auto views = events<view>(3, 2000, 0);
  auto buys = events<buy>(4, 1500, 100000);
  api::stream_execution_environment env(api::configuration{
    {"parallelism.default", "2"}, {"pipeline.auto-watermark-interval", "5 ms"}});
  auto joined = stamped(env, views)
                  .join(stamped(env, buys))
                  .where([](const view& v) { return v.user; })
                  .equal_to([](const buy& b) { return b.user; })
                  .window(api::tumbling_event_time_windows::of(100ms))
                  .apply([](const view& v, const buy& b) {
                    return std::tuple<std::int64_t, std::int64_t>{v.id, b.id};
                  });
  auto pairs = test::collect(joined);
  auto grouped = stamped(env, views)
                   .co_group(stamped(env, buys))
                   .where([](const view& v) { return v.user; })
                   .equal_to([](const buy& b) { return b.user; })
                   .window(api::tumbling_event_time_windows::of(100ms))
                   .apply<std::tuple<std::int64_t, std::int64_t, std::int64_t>>(
                     [](const std::vector<view>& vs, const std::vector<buy>& bs,
                        api::collector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>& out) {
                       auto user = vs.empty() ? bs.front().user : vs.front().user;
                       out.collect({user, static_cast<std::int64_t>(vs.size()),
                                    static_cast<std::int64_t>(bs.size())});
                     });
  auto groups = test::collect(grouped);
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 4;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  std::multiset<std::tuple<std::int64_t, std::int64_t>> want_pairs;
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::int64_t, std::int64_t>> want_groups;
  for (const auto& v : views) {
    ++want_groups[{v.user, v.at / 100}].first;
    for (const auto& b : buys)
      if (v.user == b.user && v.at / 100 == b.at / 100)
        want_pairs.insert({v.id, b.id});
  }
  for (const auto& b : buys)
    ++want_groups[{b.user, b.at / 100}].second;
  std::multiset<std::tuple<std::int64_t, std::int64_t>> got_pairs(pairs->values.begin(),
                                                                   pairs->values.end());
  CHECK(got_pairs == want_pairs);
  std::multiset<std::tuple<std::int64_t, std::int64_t, std::int64_t>> want_counts, got_counts(
    groups->values.begin(), groups->values.end());
  for (const auto& [k, c] : want_groups)
    want_counts.insert({k.first, c.first, c.second});
  CHECK(got_counts == want_counts);
  test::check_resources_released(cluster);
}
