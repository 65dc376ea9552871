/// `flint-bench nexmark --query qN | --all [--events N] [--parallelism P]
/// [--checkpoint-interval MS] [--backend hashmap|rocksdb] [--tps T]`: Nexmark's queries
/// (apps/nexmark/nexmark_queries.hpp) end to end on a MiniCluster, Nexmark's source to a sink
/// that discards the rows (Flink's blackhole connector), as nexmark-flink measures them. Each run
/// prints one JSON line: wall seconds, `events_per_s` (events over wall time), `cpu_s` (the whole
/// process's user + system CPU during the run, getrusage) and `events_per_s_per_core` (events
/// per CPU second, what Nexmark's README tabulates per core), beside the same figures of the
/// generator alone (source → blackhole at the same parallelism: the ceiling q0 can reach) and
/// Flink's published per-core figure where there is one. Checkpoints (into a scratch directory)
/// when MS > 0: the JSON line then also counts the checkpoints the run completed, from the
/// JobMaster's "Completed checkpoint" log lines for its job (as `flint-bench checkpoint`), with
/// their mean and largest checkpointDuration (trigger to the last acknowledgement) and the last
/// one's size; a run with checkpoints that completed none is an error (it would measure
/// nothing: more events or a shorter interval). Each checkpoint's phases (alignment, the
/// synchronous and asynchronous parts): apps/bench/bench_checkpoint_phases.sh, as
/// docs/checkpoint_cost.md measures them. `--all` runs every query without and with
/// checkpoints (every MS ms, 1000 by default) and prints a table of the runs on standard error
/// after the JSON lines.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "apps/nexmark/nexmark_queries.hpp"
#include "apps/nexmark/nexmark_source.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
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
  /// The job's id, to find its checkpoints in the log.
  std::string job_id;
  /// Checkpoints completed (runs with checkpoints), their checkpointDuration mean and largest,
  /// the last one's size.
  std::int64_t checkpoints = 0;
  double checkpoint_mean_ms = 0;
  std::int64_t checkpoint_max_ms = 0;
  std::int64_t checkpoint_bytes = 0;
};

/// The JobMaster's lines, kept in memory to count a run's checkpoints (only the last ones: a
/// run's lines are read right after it).
std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> checkpoint_log;

void count_checkpoints(figures& f) {
  static const std::regex completed(
    R"(Completed checkpoint \d+ for job (\w+) \((\d+) bytes, checkpointDuration=(\d+) ms)");
  double sum_ms = 0;
  for (const auto& line : checkpoint_log->last_formatted()) {
    std::smatch m;
    if (!std::regex_search(line, m, completed) || m[1] != f.job_id)
      continue;
    ++f.checkpoints;
    std::int64_t ms = std::stoll(m[3]);
    sum_ms += static_cast<double>(ms);
    f.checkpoint_max_ms = std::max(f.checkpoint_max_ms, ms);
    f.checkpoint_bytes = std::stoll(m[2]);
  }
  f.checkpoint_mean_ms = f.checkpoints > 0 ? sum_ms / static_cast<double>(f.checkpoints) : 0;
}

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
  f.job_id = job->job_id.to_string();
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
  if (checkpoint_interval_ms > 0) {
    count_checkpoints(f);
    if (f.checkpoints == 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "no checkpoint completed in %.2f s with --checkpoint-interval %lld ms: the "
                    "comparison would measure nothing (use more events or a shorter interval)",
                    f.seconds, static_cast<long long>(checkpoint_interval_ms));
      f.error = buf;
      return f;
    }
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
    "\"flink_events_per_s_per_core\":%.0f,\"vs_flink_per_core\":%.2f,"
    "\"checkpoints_completed\":%lld,\"checkpoint_mean_ms\":%.1f,\"checkpoint_max_ms\":%lld,"
    "\"checkpoint_size_bytes\":%lld}\n",
    query.c_str(), static_cast<long long>(s.events), static_cast<long long>(s.tps), s.parallelism,
    s.backend.c_str(), static_cast<long long>(interval_ms), q.seconds, q.events_per_s(), q.cpu_s,
    q.per_core(), generator.seconds, generator.events_per_s(), generator.cpu_s,
    generator.per_core(), flink_per_core(query),
    flink_per_core(query) > 0 ? q.per_core() / flink_per_core(query) : 0.0,
    static_cast<long long>(q.checkpoints), q.checkpoint_mean_ms,
    static_cast<long long>(q.checkpoint_max_ms), static_cast<long long>(q.checkpoint_bytes));
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
  // The JobMaster's info lines into memory (its checkpoints are counted from them); standard
  // error keeps the level flint-bench set (warnings unless FLINT_LOG_LEVEL).
  {
    const char* level = std::getenv("FLINT_LOG_LEVEL");
    auto stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    stderr_sink->set_level(spdlog::level::from_str(level != nullptr ? level : "warn"));
    checkpoint_log = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1 << 14);
    checkpoint_log->set_level(spdlog::level::info);
    auto lowest = std::min(stderr_sink->level(), spdlog::level::info);
    configure_logging({stderr_sink, checkpoint_log}, lowest);
  }

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
