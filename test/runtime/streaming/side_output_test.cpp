// Side outputs (Flink's OutputTag and getSideOutput): a keyed process function emits odd numbers
// to a side output and even ones to its main output; the side output feeds a chained map and,
// re-keyed, a network exchange. Each record reaches exactly the streams of its tag.

#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

using namespace flint;

namespace {

const api::output_tag<std::string> odd_tag{"odd"};

struct split_odd : api::keyed_process_function<std::int64_t, std::int64_t, std::int64_t> {
  void process_element(const std::int64_t& v, api::keyed_context<std::int64_t>& ctx,
                       api::collector<std::int64_t>& out) override {
    if (v % 2 == 0)
      out.collect(v);
    else
      ctx.output(odd_tag, "odd " + std::to_string(v));
  }
};

} // namespace

TEST_CASE("a side output reaches chained and networked consumers, the main output only its own") {
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  std::vector<std::int64_t> input(1000);
  std::iota(input.begin(), input.end(), 1);
  auto split = env.from_collection(input)
                 .key_by([](const std::int64_t& v) { return v % 5; })
                 .process<std::int64_t>(split_odd{});
  auto evens = test::collect(split);
  // Chained: a map right after the side output, same parallelism, forward.
  auto odd_lengths = test::collect(
    split.get_side_output(odd_tag).map([](const std::string& s) { return s.size(); }));
  // Across the network: the side output re-keyed.
  auto odd_rekeyed = test::collect(split.get_side_output(odd_tag)
                                     .key_by([](const std::string& s) { return s.size(); })
                                     .map([](const std::string& s) { return s; }));
  auto program = test::graphs_of(env);
  std::size_t tagged = 0;
  for (const auto& e : program.stream->edges())
    if (e.output_tag == "odd")
      ++tagged;
  CHECK(tagged == 2);

  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  auto got_evens = evens->values;
  std::sort(got_evens.begin(), got_evens.end());
  std::vector<std::int64_t> want_evens;
  for (std::int64_t v = 2; v <= 1000; v += 2)
    want_evens.push_back(v);
  CHECK(got_evens == want_evens);

  std::vector<std::string> want_odds;
  std::vector<std::size_t> want_lengths;
  for (std::int64_t v = 1; v <= 1000; v += 2) {
    want_odds.push_back("odd " + std::to_string(v));
    want_lengths.push_back(want_odds.back().size());
  }
  auto got_lengths = odd_lengths->values;
  std::sort(got_lengths.begin(), got_lengths.end());
  std::sort(want_lengths.begin(), want_lengths.end());
  CHECK(got_lengths == want_lengths);
  auto got_odds = odd_rekeyed->values;
  std::sort(got_odds.begin(), got_odds.end());
  std::sort(want_odds.begin(), want_odds.end());
  CHECK(got_odds == want_odds);
  test::check_resources_released(cluster);
}
