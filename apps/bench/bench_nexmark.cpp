/// `flint-bench nexmark --query qN | --all [--events N] [--parallelism P]
/// [--checkpoint-interval MS] [--backend hashmap|rocksdb] [--tps T]`: Nexmark's queries
/// (apps/nexmark/nexmark_queries.hpp) end to end on a MiniCluster, Nexmark's source to a sink
/// that discards the rows (Flink's blackhole connector), as nexmark-flink measures them. Each run
/// prints one JSON line: wall seconds, `events_per_s` (events over wall time), `cpu_s` (the whole
/// process's user + system CPU during the run, getrusage) and `events_per_s_per_core` (events
/// per CPU second, what Nexmark's README tabulates per core), beside the same figures of the
/// generator alone (source → blackhole at the same parallelism: the ceiling q0 can reach) and
/// Flink's published per-core figure where there is one. Checkpoints (into a scratch directory)
/// when MS > 0. `--all` runs every query without and with checkpoints (every MS ms, 1000 by
/// default) and prints a table of the runs on standard error after the JSON lines.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "apps/nexmark/nexmark_queries.hpp"
#include "apps/nexmark/nexmark_source.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace flint::bench {

namespace {

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

/// Flink 1.13's events/s per core (nexmark README, V1, RocksDB); 0 where it publishes none.
double flink_per_core(const std::string& query) {
  static const std::map<std::string, double> figures{{"q0", 155e3}, {"q1", 158e3}, {"q2", 175e3},
                                                     {"q5", 22.1e3}, {"q7", 12.3e3}, {"q8", 146e3}};
  auto it = figures.find(query);
  return it == figures.end() ? 0 : it->second;
}

struct settings {
  std::int64_t events = 10'000'000;
  std::int64_t tps = 10'000'000;
  int parallelism = 2;
  std::int64_t checkpoint_interval_ms = 0;
  std::string backend = "hashmap";
};

struct figures {
  bool ok = false;
  std::string error;
  double seconds = 0;
  double cpu_s = 0;
  double events_per_s() const { return seconds > 0 ? events / seconds : 0; }
  double per_core() const { return cpu_s > 0 ? events / cpu_s : 0; }
  double events = 0;
};

class discard_events final : public streaming::one_input_operator<nexmark::event> {
public:
  void process_element(const nexmark::event&) override {}
};

class discard_events_factory final : public api::named_operator_factory {
public:
  discard_events_factory() : api::named_operator_factory("sink.blackhole") {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context&) const override {
    return std::make_unique<discard_events>();
  }
};

/// One run of `query` ("" = the generator alone) on a fresh MiniCluster.
figures run(const std::string& query, const settings& s, std::int64_t checkpoint_interval_ms) {
  figures f;
  f.events = static_cast<double>(s.events);
  // The checkpoints go into a private directory this run makes (mkdtemp) and removes.
  auto made = make_private_temp_directory("flint-bench-nexmark-");
  if (!made) {
    f.error = made.error().to_string();
    return f;
  }
  owned_directory scratch_dir(*made);
  const auto scratch = *made;
  api::configuration config{{"parallelism.default", std::to_string(s.parallelism)},
                            {"state.backend.type", s.backend}};
  if (checkpoint_interval_ms > 0) {
    config["execution.checkpointing.interval"] = std::to_string(checkpoint_interval_ms) + " ms";
    config["state.checkpoints.dir"] = (scratch / "checkpoints").string();
  }
  api::stream_execution_environment env(config);
  nexmark::nexmark_config nc;
  nc.events_num = s.events;
  nc.tps = s.tps;
  auto events = nexmark::nexmark_source(env, nc);
  if (query.empty())
    events.transform<nexmark::event>("Sink: Blackhole", std::make_shared<discard_events_factory>());
  else if (!nexmark::query_to_blackhole(query, events)) {
    f.error = "unknown query " + query;
    return f;
  }
  auto name = "Nexmark " + (query.empty() ? std::string("generator") : query);
  auto stream = env.get_stream_graph(name);
  auto job = env.get_job_graph(name);
  if (!stream || !job) {
    f.error = (stream ? job.error() : stream.error()).to_string();
    return f;
  }
  streaming::local_cluster_options options;
  options.slots_per_task_manager = s.parallelism;
  streaming::local_cluster cluster(options);
  auto cpu_start = cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(60));
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  f.cpu_s = cpu_seconds() - cpu_start;
  if (!result) {
    f.error = result.error().to_string();
    return f;
  }
  if (result->status != graph::job_status::finished) {
    f.error = result->failure_cause;
    return f;
  }
  f.ok = true;
  return f;
}

void print_json(const std::string& query, const settings& s, std::int64_t interval_ms,
                const figures& q, const figures& generator) {
  std::printf(
    "{\"bench\":\"nexmark\",\"query\":\"%s\",\"events\":%lld,\"tps\":%lld,\"parallelism\":%d,"
    "\"backend\":\"%s\",\"checkpoint_interval_ms\":%lld,\"seconds\":%.3f,\"events_per_s\":%.0f,"
    "\"cpu_s\":%.3f,\"events_per_s_per_core\":%.0f,\"generator\":{\"seconds\":%.3f,"
    "\"events_per_s\":%.0f,\"cpu_s\":%.3f,\"events_per_s_per_core\":%.0f},"
    "\"flink_events_per_s_per_core\":%.0f,\"vs_flink_per_core\":%.2f}\n",
    query.c_str(), static_cast<long long>(s.events), static_cast<long long>(s.tps), s.parallelism,
    s.backend.c_str(), static_cast<long long>(interval_ms), q.seconds, q.events_per_s(), q.cpu_s,
    q.per_core(), generator.seconds, generator.events_per_s(), generator.cpu_s,
    generator.per_core(), flink_per_core(query),
    flink_per_core(query) > 0 ? q.per_core() / flink_per_core(query) : 0.0);
  std::fflush(stdout);
}

int usage() {
  std::fprintf(stderr,
               "usage: flint-bench nexmark --query q0|q1|q2|q3|q4|q5|q7|q8|q11 | --all "
               "[--events N] [--parallelism P] [--checkpoint-interval MS] "
               "[--backend hashmap|rocksdb] [--tps T]\n");
  return 2;
}

} // namespace

int nexmark(int argc, char** argv) {
  settings s;
  std::string query;
  bool all = false;
  bool interval_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "nexmark")
      continue;
    if (a == "--all") {
      all = true;
      continue;
    }
    const char* v = value();
    if (v == nullptr)
      return usage();
    if (a == "--query")
      query = v;
    else if (a == "--events")
      s.events = std::atoll(v);
    else if (a == "--tps")
      s.tps = std::atoll(v);
    else if (a == "--parallelism")
      s.parallelism = std::atoi(v);
    else if (a == "--checkpoint-interval") {
      s.checkpoint_interval_ms = std::atoll(v);
      interval_given = true;
    } else if (a == "--backend")
      s.backend = v;
    else
      return usage();
  }
  if ((query.empty() && !all) || s.events <= 0 || s.parallelism <= 0 || s.tps <= 0)
    return usage();

  // A discarded warm-up run: the process's first job pays for allocator growth and page faults.
  {
    settings warm = s;
    warm.events = std::min<std::int64_t>(s.events, 200'000);
    run("q0", warm, 0);
  }
  auto generator = run("", s, 0);
  if (!generator.ok) {
    std::fprintf(stderr, "flint-bench nexmark: the generator run failed: %s\n",
                 generator.error.c_str());
    return 1;
  }

  struct row {
    std::string query;
    std::int64_t interval_ms;
    figures f;
  };
  std::vector<row> rows;
  std::vector<std::string> queries = all ? nexmark::query_names() : std::vector<std::string>{query};
  std::vector<std::int64_t> intervals{s.checkpoint_interval_ms};
  if (all)
    intervals = {0, interval_given && s.checkpoint_interval_ms > 0 ? s.checkpoint_interval_ms : 1000};
  int failures = 0;
  for (const auto& q : queries)
    for (auto interval : intervals) {
      auto f = run(q, s, interval);
      if (!f.ok) {
        std::fprintf(stderr, "flint-bench nexmark: %s failed: %s\n", q.c_str(), f.error.c_str());
        ++failures;
        continue;
      }
      print_json(q, s, interval, f, generator);
      rows.push_back({q, interval, f});
    }

  if (all) {
    std::fprintf(stderr,
                 "\nNexmark on Flint: %lld events, p=%d, %s; generator alone %.2f M events/s, "
                 "%.2f M per core\n",
                 static_cast<long long>(s.events), s.parallelism, s.backend.c_str(),
                 generator.events_per_s() / 1e6, generator.per_core() / 1e6);
    std::fprintf(stderr, "%-5s %-11s %9s %13s %8s %15s %13s %8s\n", "query", "checkpoints",
                 "seconds", "events/s", "cpu_s", "events/s/core", "Flink/core", "ratio");
    for (const auto& r : rows) {
      auto flink = flink_per_core(r.query);
      std::string cp = r.interval_ms > 0 ? std::to_string(r.interval_ms) + " ms" : "off";
      std::fprintf(stderr, "%-5s %-11s %9.2f %13.0f %8.2f %15.0f %13s %8s\n", r.query.c_str(),
                   cp.c_str(), r.f.seconds, r.f.events_per_s(), r.f.cpu_s, r.f.per_core(),
                   flink > 0 ? std::to_string(static_cast<long long>(flink)).c_str() : "-",
                   flink > 0 ? (std::to_string(r.f.per_core() / flink).substr(0, 6) + "x").c_str()
                             : "-");
    }
  }
  return failures == 0 ? 0 : 1;
}

} // namespace flint::bench
