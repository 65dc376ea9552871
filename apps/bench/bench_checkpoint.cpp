/// `flint-bench checkpoint --input FILE [--parallelism P] [--interval MS] [--backend B]
/// [--rounds N] [--log FILE]`: WordCount (the example job, writing its output) on the
/// MiniCluster with checkpoints every MS ms (default 1000) into a checkpoint directory, against
/// the same job on the same state backend without checkpoints, in the same run: the runs
/// alternate N times (default 3) and the best of each counts. Every checkpointed run must
/// complete at least one checkpoint (counted per run from the JobMaster's log lines for its
/// job); a run with none is an error (the input is too short for the interval). Prints one JSON
/// line: words/s of each, their ratio (goal >= 0.95), each round's seconds and completed
/// checkpoints, their mean and largest duration and their size; the same per CPU-second of the
/// process (`cpu_ratio`, the least CPU of each: steadier than wall time when other processes
/// share the machine, but blind to waiting on the disk); with B = rocksdb also the bare RocksDB
/// get + put loop of the same words (the backend's floor without its cache). B is
/// `state.backend.type` (hashmap, rocksdb). `--log FILE` writes the runs' log lines there
/// (triggers, completions, task ends). Make FILE with `flint-bench wordcount --input FILE
/// --generate MB`; runs shorter than the interval measure only the final checkpoint (300 MB:
/// about 5 s and 5 checkpoints a run here). Each checkpoint's phases:
/// apps/bench/bench_checkpoint_phases.sh; what they cost: docs/checkpoint_cost.md.

#include "apps/bench/benches.hpp"

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/sinks/ringbuffer_sink.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace flint::bench {

namespace {

struct run_figures {
  double seconds = 0;
  /// CPU seconds of the whole process (every task, upload and JobMaster thread) during the run:
  /// less sensitive than `seconds` to other processes on a shared machine.
  double cpu_seconds = 0;
  bool ok = false;
  std::string error;
  /// The job's id, to find its own checkpoints in the log.
  std::string job_id;
};

run_figures run_once(const std::string& input, int parallelism, std::int64_t interval_ms,
                     const std::string& backend, const std::filesystem::path& scratch) {
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  std::filesystem::create_directories(scratch, ec);
  // The same backend either way: only the checkpoints differ.
  api::configuration config{{"parallelism.default", std::to_string(parallelism)},
                            {"state.backend.type", backend}};
  if (interval_ms > 0) {
    config["execution.checkpointing.interval"] = std::to_string(interval_ms) + " ms";
    config["state.checkpoints.dir"] = (scratch / "checkpoints").string();
  }
  api::stream_execution_environment env(config);
  examples::build_wordcount(env, {input, (scratch / "output").string()});
  auto stream = env.get_stream_graph("WordCount checkpoint benchmark");
  auto job = env.get_job_graph("WordCount checkpoint benchmark");
  run_figures out;
  if (!stream || !job) {
    out.error = "cannot build the job";
    return out;
  }
  out.job_id = job->job_id.to_string();
  streaming::local_cluster_options options;
  options.task_managers = 1;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  auto start = std::chrono::steady_clock::now();
  auto cpu_start = std::clock();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(30));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  if (!result) {
    out.error = result.error().to_string();
  } else if (result->status != graph::job_status::finished) {
    out.error = result->failure_cause;
  } else {
    out.ok = true;
  }
  return out;
}

} // namespace

std::int64_t count_words(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return -1;
  std::int64_t words = 0;
  bool in_word = false;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    for (std::size_t i = 0; i < n; ++i) {
      auto c = static_cast<unsigned char>(buf[i]);
      bool w =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      words += w && !in_word ? 1 : 0;
      in_word = w;
    }
  std::fclose(f);
  return words;
}

int checkpoint(int argc, char** argv) {
  std::string input;
  int parallelism = 2;
  std::int64_t interval_ms = 1000;
  std::string backend = "hashmap";
  int rounds = 3;
  std::string log_path;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--input" && i + 1 < argc)
      input = argv[++i];
    else if (a == "--parallelism" && i + 1 < argc)
      parallelism = std::max(1, std::atoi(argv[++i]));
    else if (a == "--interval" && i + 1 < argc)
      interval_ms = std::max(10L, std::atol(argv[++i]));
    else if (a == "--backend" && i + 1 < argc)
      backend = argv[++i];
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--log" && i + 1 < argc)
      log_path = argv[++i];
    else if (a != "checkpoint") {
      std::fprintf(stderr,
                   "usage: flint-bench checkpoint --input FILE [--parallelism P] "
                   "[--interval MS] [--backend hashmap|rocksdb] [--rounds N] [--log FILE]\n");
      return 2;
    }
  }
  auto words = input.empty() ? -1 : count_words(input);
  if (words < 0) {
    std::fprintf(stderr,
                 "flint-bench checkpoint: --input FILE is required and readable "
                 "(make one with flint-bench wordcount --input FILE --generate MB)\n");
    return 2;
  }
  // The JobMaster's "Completed checkpoint" lines are the figures: keep the log in memory.
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1 << 16);
  configure_logging({ring}, spdlog::level::info);
  // Every run's files go under a private directory made here (mkdtemp) and removed on return;
  // a run clears only its own subdirectory.
  auto made = make_private_temp_directory("flint-bench-checkpoint-");
  if (!made) {
    std::fprintf(stderr, "flint-bench checkpoint: %s\n", made.error().to_string().c_str());
    return 1;
  }
  owned_directory scratch_root(*made);
  const auto scratch = *made / "run";

  std::regex completed(
    R"(Completed checkpoint \d+ for job (\w+) \((\d+) bytes, checkpointDuration=(\d+) ms)");
  double best_plain = 1e300;
  double best_checkpointed = 1e300;
  std::vector<double> plain_s, checkpointed_s, plain_cpu_s, checkpointed_cpu_s;
  std::vector<std::int64_t> completed_per_run;
  std::int64_t count = 0;
  double sum_ms = 0;
  std::int64_t max_ms = 0;
  std::int64_t last_bytes = 0;
  for (int r = 0; r < rounds; ++r) {
    for (bool with : {false, true}) {
      auto figures = run_once(input, parallelism, with ? interval_ms : 0, backend, scratch);
      if (!figures.ok) {
        std::fprintf(stderr, "flint-bench checkpoint: the job failed: %s\n", figures.error.c_str());
        return 1;
      }
      (with ? checkpointed_s : plain_s).push_back(figures.seconds);
      (with ? checkpointed_cpu_s : plain_cpu_s).push_back(figures.cpu_seconds);
      (with ? best_checkpointed : best_plain) =
        std::min(with ? best_checkpointed : best_plain, figures.seconds);
      if (!with)
        continue;
      // This run's checkpoints (the ring holds the lines of every run so far).
      std::int64_t of_run = 0;
      for (const auto& line : ring->last_formatted()) {
        std::smatch m;
        if (!std::regex_search(line, m, completed) || m[1] != figures.job_id)
          continue;
        ++of_run;
        ++count;
        std::int64_t ms = std::stoll(m[3]);
        sum_ms += static_cast<double>(ms);
        max_ms = std::max(max_ms, ms);
        last_bytes = std::stoll(m[2]);
      }
      completed_per_run.push_back(of_run);
      if (of_run == 0) {
        std::fprintf(stderr,
                     "flint-bench checkpoint: round %d completed no checkpoint in %.2f s with "
                     "--interval %lld ms: the comparison would measure nothing (use a larger "
                     "input or a shorter interval)\n",
                     r + 1, figures.seconds, static_cast<long long>(interval_ms));
        return 1;
      }
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  if (!log_path.empty()) {
    // The runs' log lines (the last 65536), to read a run's timeline: triggers, completions,
    // the tasks' phase timings at debug level.
    std::FILE* log = std::fopen(log_path.c_str(), "w");
    if (!log) {
      std::fprintf(stderr, "flint-bench checkpoint: cannot write the log to %s: %s\n",
                   log_path.c_str(), std::strerror(errno));
      return 1;
    }
    for (const auto& line : ring->last_formatted())
      std::fputs(line.c_str(), log);
    std::fclose(log);
  }

  std::string floor_json;
  if (backend == "rocksdb") {
    double floor_wps = 0;
    double floor_cpu_wps = 0;
    std::int64_t floor_words = 0;
    std::string error;
    if (!rocksdb_floor(input, 1'000'000, scratch / "floor", floor_words, floor_wps, floor_cpu_wps,
                       error)) {
      std::fprintf(stderr, "flint-bench checkpoint: the bare RocksDB loop failed: %s\n",
                   error.c_str());
      return 1;
    }
    std::filesystem::remove_all(scratch, ec);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  ",\"floor_rocksdb_get_put\":{\"words\":%lld,\"words_per_s\":%.0f,"
                  "\"words_per_cpu_s\":%.0f}",
                  static_cast<long long>(floor_words), floor_wps, floor_cpu_wps);
    floor_json = buf;
  }
  auto list = [](const auto& values, const char* format) {
    std::string out = "[";
    char buf[32];
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::snprintf(buf, sizeof buf, format, values[i]);
      out += (i ? "," : "") + std::string(buf);
    }
    return out + "]";
  };
  std::vector<long long> completed_ll(completed_per_run.begin(), completed_per_run.end());
  double plain_wps = static_cast<double>(words) / best_plain;
  double checkpointed_wps = static_cast<double>(words) / best_checkpointed;
  // Per CPU-second: the least CPU either variant needed (the work, whatever else ran).
  double plain_cpu = *std::min_element(plain_cpu_s.begin(), plain_cpu_s.end());
  double checkpointed_cpu = *std::min_element(checkpointed_cpu_s.begin(), checkpointed_cpu_s.end());
  std::printf(
    "{\"bench\":\"checkpoint\",\"backend\":\"%s\",\"parallelism\":%d,\"interval_ms\":%lld,"
    "\"words\":%lld,\"rounds\":%d,\"plain_words_per_s\":%.0f,"
    "\"checkpointed_words_per_s\":%.0f,\"ratio\":%.3f,\"plain_s\":%s,\"checkpointed_s\":%s,"
    "\"plain_words_per_cpu_s\":%.0f,\"checkpointed_words_per_cpu_s\":%.0f,\"cpu_ratio\":%.3f,"
    "\"plain_cpu_s\":%s,\"checkpointed_cpu_s\":%s,"
    "\"checkpoints_completed\":%lld,\"checkpoints_per_run\":%s,"
    "\"checkpoint_mean_ms\":%.1f,\"checkpoint_max_ms\":%lld,"
    "\"checkpoint_size_bytes\":%lld%s}\n",
    backend.c_str(), parallelism, static_cast<long long>(interval_ms),
    static_cast<long long>(words), rounds, plain_wps, checkpointed_wps,
    checkpointed_wps / plain_wps, list(plain_s, "%.3f").c_str(),
    list(checkpointed_s, "%.3f").c_str(), static_cast<double>(words) / plain_cpu,
    static_cast<double>(words) / checkpointed_cpu, plain_cpu / checkpointed_cpu,
    list(plain_cpu_s, "%.3f").c_str(), list(checkpointed_cpu_s, "%.3f").c_str(),
    static_cast<long long>(count),
    list(completed_ll, "%lld").c_str(), count > 0 ? sum_ms / static_cast<double>(count) : 0.0,
    static_cast<long long>(max_ms), static_cast<long long>(last_bytes), floor_json.c_str());
  return 0;
}

} // namespace flint::bench
