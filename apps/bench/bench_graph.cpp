/// `flint-bench graph`: time and peak memory of building ExecutionGraphs (issue "Graphs").
///
/// Cases: 4 JobVertices at parallelism 1000 joined by ALL_TO_ALL edges, and one 10000 x 10000
/// ALL_TO_ALL pair. The baseline, run last in the same process so it cannot inflate the other
/// figures, materialises one edge per producer/consumer pair as Flink before 1.13 did, at a
/// size it can afford; it shows what the grouped edges save.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "runtime/graph/execution_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace flint::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double millis_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

/// A "Vm...:" line of /proc/self/status in KiB, or -1.
long status_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::string prefix = std::string(field) + ":";
  while (std::getline(status, line))
    if (line.rfind(prefix, 0) == 0)
      return std::stol(line.substr(prefix.size()));
  return -1;
}

std::int64_t identity(const std::int64_t& x) {
  return x;
}

/// `vertices` JobVertices at `parallelism`, each pair joined by REBALANCE (ALL_TO_ALL).
expected<graph::job_graph> all_to_all_chain(int vertices, int parallelism) {
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", std::to_string(parallelism)}});
  env.set_max_parallelism(32768);
  auto stream = env.generate_sequence(0, 1);
  for (int v = 2; v < vertices; ++v)
    stream = stream.rebalance().map(identity);
  stream.rebalance().print();
  return env.get_job_graph("bench");
}

int run_case(const char* name, int vertices, int parallelism) {
  long rss_before = status_kib("VmRSS");
  auto start = clock_type::now();
  auto job = all_to_all_chain(vertices, parallelism);
  double job_ms = millis_since(start);
  if (!job) {
    std::fprintf(stderr, "graph bench: %s\n", job.error().to_string().c_str());
    return 1;
  }
  start = clock_type::now();
  auto eg = graph::execution_graph::build(std::move(*job));
  double build_ms = millis_since(start);
  if (!eg) {
    std::fprintf(stderr, "graph bench: %s\n", eg.error().to_string().c_str());
    return 1;
  }
  long rss_after = status_kib("VmRSS");
  // Deployment reads the grouped edges back out: one descriptor of the last subtask, whose input
  // gate lists every producer.
  start = clock_type::now();
  auto tdd = graph::make_task_deployment_descriptor(
    *eg, static_cast<std::uint32_t>(eg->vertices().size() - 1));
  double tdd_ms = millis_since(start);
  std::size_t channels =
    tdd && !tdd->input_gates.empty() ? tdd->input_gates[0].partition_numbers.size() : 0;
  std::printf(
    "{\"bench\":\"graph\",\"case\":\"%s\",\"job_vertices\":%d,\"parallelism\":%d,"
    "\"execution_vertices\":%zu,\"partitions\":%zu,\"consumed_partition_groups\":%zu,"
    "\"regions\":%zu,\"job_graph_ms\":%.3f,\"execution_graph_ms\":%.3f,"
    "\"rss_growth_kib\":%ld,\"peak_rss_kib\":%ld,\"one_tdd_ms\":%.3f,\"tdd_input_channels\":%zu}\n",
    name, vertices, parallelism, eg->vertices().size(), eg->partitions().size(),
    eg->consumed_partition_groups().size(), eg->regions().size(), job_ms, build_ms,
    rss_after - rss_before, status_kib("VmHWM"), tdd_ms, channels);
  std::fflush(stdout);
  return 0;
}

/// Baseline: one (partition, consumer) edge per pair, each consumer holding its own list.
void run_baseline(int producers, int consumers) {
  long rss_before = status_kib("VmRSS");
  auto start = clock_type::now();
  struct execution_edge {
    std::uint32_t partition;
    std::uint32_t consumer;
  };
  std::vector<std::vector<execution_edge>> inputs(static_cast<std::size_t>(consumers));
  std::size_t edges = 0;
  for (int c = 0; c < consumers; ++c) {
    auto& list = inputs[static_cast<std::size_t>(c)];
    list.reserve(static_cast<std::size_t>(producers));
    for (int p = 0; p < producers; ++p)
      list.push_back({static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(c)});
    edges += list.size();
  }
  double ms = millis_since(start);
  long rss_after = status_kib("VmRSS");
  std::printf(
    "{\"bench\":\"graph\",\"case\":\"baseline_edge_per_pair\",\"producers\":%d,\"consumers\":%d,"
    "\"execution_edges\":%zu,\"connect_ms\":%.3f,\"rss_growth_kib\":%ld,\"peak_rss_kib\":%ld}\n",
    producers, consumers, edges, ms, rss_after - rss_before, status_kib("VmHWM"));
  std::fflush(stdout);
}

} // namespace

int graph(int argc, char** argv) {
  // `flint-bench graph [P]`: P replaces 10000 in the pair case.
  int pair = argc > 1 ? std::atoi(argv[1]) : 10000;
  if (pair < 1) {
    std::fprintf(stderr, "usage: flint-bench graph [parallelism of the all-to-all pair]\n");
    return 2;
  }
  std::printf("{\"bench\":\"graph\",\"case\":\"start\",\"peak_rss_kib\":%ld}\n",
              status_kib("VmHWM"));
  if (int rc = run_case("4x1000", 4, 1000); rc != 0)
    return rc;
  if (int rc = run_case("all_to_all_pair", 2, pair); rc != 0)
    return rc;
  run_baseline(2000, 2000);
  return 0;
}

} // namespace flint::bench
