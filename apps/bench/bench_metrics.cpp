/// `flint-bench metrics --input FILE [--rounds N] [--parallelism P]`: what the
/// task metrics cost. WordCount (the example's pipeline, writing its text output) on the
/// MiniCluster, alternately with every TaskExecutor's tasks registering and counting their
/// figures (a metric registry, as a TaskManager node has) and without, N rounds each in the
/// same run. Prints one JSON line: the median words per second of each and their ratio
/// (metrics on over off; the goal is at least 0.98). Make an input with
/// `flint-bench wordcount --input FILE --generate MB`.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/metrics/metric_registry.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/common.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace flint::bench {

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

/// Seconds WordCount took over `input`, with or without task metrics.
double run_once(const std::string& input, const fs::path& output, int parallelism,
                bool with_metrics) {
  fs::remove_all(output);
  api::stream_execution_environment env({{"parallelism.default", std::to_string(parallelism)}});
  examples::build_wordcount(env, {input, output.string()});
  auto stream = env.get_stream_graph("WordCount");
  auto job = env.get_job_graph("WordCount");
  if (!stream || !job)
    return -1;
  streaming::local_cluster_options options;
  options.task_managers = 1;
  options.slots_per_task_manager = parallelism;
  std::shared_ptr<metrics::metric_registry> registry;
  if (with_metrics)
    registry = metrics::metric_registry::make();
  options.metrics = registry;
  streaming::local_cluster cluster(options);
  auto start = clock_type::now();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)));
  double s = std::chrono::duration<double>(clock_type::now() - start).count();
  if (!result || result->status != graph::job_status::finished)
    return -1;
  // With metrics on, the figures were really kept: the tasks registered their groups (an ended
  // task's group goes with it).
  if (registry && registry->groups_added() == 0)
    return -1;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int metrics(int argc, char** argv) {
  std::string input;
  int rounds = 5, parallelism = 2;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc)
      input = argv[++i];
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--parallelism" && i + 1 < argc)
      parallelism = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: flint-bench metrics --input FILE [--rounds N] "
                   "[--parallelism P]\n");
      return 2;
    }
  }
  if (input.empty()) {
    std::fprintf(stderr, "flint-bench metrics: --input FILE is required\n");
    return 2;
  }
  if (!fs::is_regular_file(input)) {
    std::fprintf(stderr,
                 "flint-bench metrics: cannot read %s (make one with flint-bench wordcount "
                 "--input FILE --generate MB)\n",
                 input.c_str());
    return 1;
  }
  set_logging_level(spdlog::level::warn);
  auto words = static_cast<double>(count_words(input));
  if (words <= 0) {
    std::fprintf(stderr, "flint-bench metrics: no words in %s\n", input.c_str());
    return 1;
  }
  auto output = fs::temp_directory_path() / "flint-bench-metrics-output";
  std::vector<double> on, off;
  // Alternating, so that a change in the machine's load hits both alike.
  for (int r = 0; r < rounds; ++r)
    for (bool with_metrics : {false, true}) {
      double s = run_once(input, output, parallelism, with_metrics);
      if (s <= 0) {
        std::fprintf(stderr, "flint-bench metrics: the job failed (metrics %s)\n",
                     with_metrics ? "on" : "off");
        return 1;
      }
      (with_metrics ? on : off).push_back(words / s);
    }
  std::error_code ec;
  fs::remove_all(output, ec);
  double on_rate = median(on), off_rate = median(off);
  std::printf(
    "{\"bench\":\"metrics\",\"input\":\"%s\",\"words\":%.0f,\"parallelism\":%d,"
    "\"rounds\":%d,\"metrics_off_words_per_s\":%.0f,\"metrics_on_words_per_s\":%.0f,"
    "\"on_over_off\":%.3f}\n",
    input.c_str(), words, parallelism, rounds, off_rate, on_rate, on_rate / off_rate);
  return 0;
}

} // namespace flint::bench
