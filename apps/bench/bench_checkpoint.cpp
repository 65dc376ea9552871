/// `flint-bench checkpoint --input FILE [--parallelism P] [--interval MS] [--backend B]
/// [--rounds N]`: WordCount (the example job, writing its output) on the MiniCluster with
/// checkpoints every MS ms (default 1000) into a checkpoint directory, against the same job
/// without checkpoints, in the same run: the runs alternate N times (default 3) and the best of
/// each counts. Prints one JSON line: words/s of each, their ratio (goal >= 0.95), and from the
/// JobMaster's own log lines the checkpoints completed, their mean and largest duration and their
/// size. B is `state.backend.type` (hashmap, rocksdb). Make FILE with
/// `flint-bench wordcount --input FILE --generate MB`.

#include "api/api.hpp"
#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/sinks/ringbuffer_sink.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace flint::bench {

namespace {

struct run_figures {
  double seconds = 0;
  bool ok = false;
  std::string error;
};

run_figures run_once(const std::string& input, int parallelism, std::int64_t interval_ms,
                     const std::string& backend, const std::filesystem::path& scratch) {
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);
  std::filesystem::create_directories(scratch, ec);
  api::configuration config{{"parallelism.default", std::to_string(parallelism)}};
  if (interval_ms > 0) {
    config["execution.checkpointing.interval"] = std::to_string(interval_ms) + " ms";
    config["state.checkpoints.dir"] = (scratch / "checkpoints").string();
    config["state.backend.type"] = backend;
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
  streaming::local_cluster_options options;
  options.task_managers = 1;
  options.slots_per_task_manager = parallelism;
  streaming::local_cluster cluster(options);
  auto start = std::chrono::steady_clock::now();
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(30));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
    else if (a != "checkpoint") {
      std::fprintf(stderr,
                   "usage: flint-bench checkpoint --input FILE [--parallelism P] "
                   "[--interval MS] [--backend hashmap|rocksdb] [--rounds N]\n");
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
  auto scratch = std::filesystem::temp_directory_path()
    / ("flint-bench-checkpoint-" + std::to_string(::getpid()));

  double best_plain = 1e300;
  double best_checkpointed = 1e300;
  for (int r = 0; r < rounds; ++r) {
    for (bool with : {false, true}) {
      auto figures = run_once(input, parallelism, with ? interval_ms : 0, backend, scratch);
      if (!figures.ok) {
        std::fprintf(stderr, "flint-bench checkpoint: the job failed: %s\n", figures.error.c_str());
        return 1;
      }
      (with ? best_checkpointed : best_plain) =
        std::min(with ? best_checkpointed : best_plain, figures.seconds);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(scratch, ec);

  std::regex completed(
    R"(Completed checkpoint \d+ for job \w+ \((\d+) bytes, checkpointDuration=(\d+) ms)");
  std::int64_t count = 0;
  double sum_ms = 0;
  std::int64_t max_ms = 0;
  std::int64_t last_bytes = 0;
  for (const auto& line : ring->last_formatted()) {
    std::smatch m;
    if (!std::regex_search(line, m, completed))
      continue;
    ++count;
    std::int64_t ms = std::stoll(m[2]);
    sum_ms += static_cast<double>(ms);
    max_ms = std::max(max_ms, ms);
    last_bytes = std::stoll(m[1]);
  }
  double plain_wps = static_cast<double>(words) / best_plain;
  double checkpointed_wps = static_cast<double>(words) / best_checkpointed;
  std::printf(
    "{\"bench\":\"checkpoint\",\"backend\":\"%s\",\"parallelism\":%d,\"interval_ms\":%lld,"
    "\"words\":%lld,\"rounds\":%d,\"plain_words_per_s\":%.0f,"
    "\"checkpointed_words_per_s\":%.0f,\"ratio\":%.3f,\"checkpoints_completed\":%lld,"
    "\"checkpoint_mean_ms\":%.1f,\"checkpoint_max_ms\":%lld,"
    "\"checkpoint_size_bytes\":%lld}\n",
    backend.c_str(), parallelism, static_cast<long long>(interval_ms),
    static_cast<long long>(words), rounds, plain_wps, checkpointed_wps,
    checkpointed_wps / plain_wps, static_cast<long long>(count),
    count > 0 ? sum_ms / static_cast<double>(count) : 0.0, static_cast<long long>(max_ms),
    static_cast<long long>(last_bytes));
  return 0;
}

} // namespace flint::bench
