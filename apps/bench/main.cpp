// flint-bench <name> [args]: benchmarks that print JSON lines and always run their baseline in
// the same run (DESIGN.md "Testing").

#include <cstdio>
#include <cstring>

#include "apps/bench/benches.hpp"

#include <cstdlib>
#include <memory>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "runtime/common/logging.hpp"

namespace {

struct bench_entry {
  const char* name;
  int (*run)(int, char**);
  const char* what;
};

const bench_entry benches[] = {
  {"rpc", flint::bench::rpc, "endpoint ask round trip vs bare CAF request/response"},
#ifdef FLINT_BENCH_HAS_GRAPH
  {"graph", flint::bench::graph, "ExecutionGraph build time and peak RSS"},
#endif
#ifdef FLINT_BENCH_HAS_CLUSTER
  {"cluster", flint::bench::cluster, "MiniCluster start, submit to RUNNING and FINISHED"},
#endif
#ifdef FLINT_BENCH_HAS_WORDCOUNT
  {"wordcount", flint::bench::wordcount,
   "WordCount on the MiniCluster vs a plain single-threaded count"},
  {"checkpoint", flint::bench::checkpoint,
   "WordCount with checkpoints every second vs without, checkpoint duration and size"},
  {"metrics", flint::bench::metrics, "WordCount with task metrics on vs off"},
  {"state", flint::bench::state,
   "WordCount keyed state: hashmap vs RocksDB with and without the cache vs a bare RocksDB loop"},
#endif
#ifdef FLINT_BENCH_HAS_WINDOW
  {"window", flint::bench::window,
   "keyed tumbling event-time window count: Flint p=1, p=2 vs a single-thread loop"},
  {"time_cost", flint::bench::time_cost, "WordCount with timestamps and watermarks vs without"},
#endif
#ifdef FLINT_BENCH_HAS_NEXMARK
  {"nexmark", flint::bench::nexmark,
   "Nexmark's queries, source to blackhole: events/s, CPU s, events/s per core vs Flink's"},
#endif
#ifdef FLINT_BENCH_HAS_EXCHANGE
  {"exchange", flint::bench::exchange, "one remote channel vs bare CAF messages, two processes"},
#endif
#ifdef FLINT_BENCH_HAS_FAILOVER
  {"failover", flint::bench::failover,
   "lost TaskManager to RUNNING again: connection drop vs heartbeat timeout"},
#endif
#ifdef FLINT_BENCH_HAS_HA
  {"ha", flint::bench::ha,
   "lost leading JobManager (ZooKeeper HA) to RUNNING again: kill -9 vs graceful stop"},
#endif
#ifdef FLINT_BENCH_HAS_REST
  {"rest", flint::bench::rest,
   "/jobs/overview latency with 100 concurrent clients while a job runs, vs GET /config"},
#endif
};

int usage(FILE* out) {
  std::fprintf(out, "usage: flint-bench <name> [args]\n\nbenchmarks:\n");
  for (auto& b : benches)
    std::fprintf(out, "  %-10s %s\n", b.name, b.what);
  return out == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char** argv) {
  // Stdout carries the JSON lines; Flink's log lines go to stderr, warnings only unless
  // FLINT_LOG_LEVEL says otherwise (logging every task would be measured too).
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  flint::configure_logging({std::make_shared<spdlog::sinks::stderr_color_sink_mt>()},
                           spdlog::level::from_str(level != nullptr ? level : "warn"));
  if (argc < 2)
    return usage(stderr);
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)
    return usage(stdout);
  for (auto& b : benches)
    if (std::strcmp(argv[1], b.name) == 0)
      return b.run(argc - 1, argv + 1);
  std::fprintf(stderr, "flint-bench: unknown benchmark '%s'\n", argv[1]);
  return usage(stderr);
}
