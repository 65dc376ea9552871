/// `flint-nexmark dump --events N [--tps T] [--parallelism P] [--seed S] --out F`: Nexmark's
/// events 0 .. N-1 as JSON lines (nexmark_json.hpp), in event-number order — exactly the events
/// a query's nexmark_source makes from the same N, T and S at any parallelism. P threads make
/// them (subtask i of P takes i, i + P, ..., as the source does); the file is the same for any P.
///
/// `flint-nexmark throughput --events N [--tps T] [--seed S]`: the generator alone on one
/// thread, events per second as one JSON object.

#include "apps/nexmark/nexmark_generator.hpp"
#include "apps/nexmark/nexmark_json.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

namespace {

using flint::nexmark::nexmark_config;

/// Events [0, config.events_num) to `out`, `parallelism` threads making each block's lines.
void dump(const nexmark_config& config, int parallelism, std::ostream& out) {
  constexpr std::int64_t block = 1 << 15;
  auto p = static_cast<std::int64_t>(parallelism);
  std::vector<std::vector<std::string>> lines(static_cast<std::size_t>(parallelism));
  for (std::int64_t first = 0; first < config.events_num; first += block) {
    auto end = std::min(first + block, config.events_num);
    auto make = [&](std::int64_t subtask) {
      auto& mine = lines[static_cast<std::size_t>(subtask)];
      mine.clear();
      for (auto n = first + subtask; n < end; n += p)
        mine.push_back(flint::nexmark::to_json_line(flint::nexmark::generate(n, config)));
    };
    std::vector<std::thread> threads;
    for (std::int64_t i = 1; i < p; ++i)
      threads.emplace_back(make, i);
    make(0);
    for (auto& t : threads)
      t.join();
    for (auto n = first; n < end; ++n) {
      auto k = n - first;
      out << lines[static_cast<std::size_t>(k % p)][static_cast<std::size_t>(k / p)] << '\n';
    }
  }
}

/// CPU seconds this process has used.
double cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Events per second of `generate` alone on this thread, of wall time and of CPU time (the
/// machine may be shared); a checksum keeps the work alive.
void throughput(const nexmark_config& config) {
  (void)flint::nexmark::generate(0, config); // the process-wide tables, outside the timing
  auto cpu_start = cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  std::int64_t checksum = 0;
  std::int64_t bytes = 0;
  for (std::int64_t n = 0; n < config.events_num; ++n) {
    auto e = flint::nexmark::generate(n, config);
    checksum += e.timestamp();
    bytes += flint::nexmark::estimated_size(e);
  }
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  auto cpu = cpu_seconds() - cpu_start;
  auto events = static_cast<double>(config.events_num);
  nlohmann::json j{{"events", config.events_num},
                   {"seconds", elapsed.count()},
                   {"cpu_s", cpu},
                   {"events_per_s", events / elapsed.count()},
                   {"events_per_cpu_s", events / cpu},
                   {"bytes", bytes},
                   {"checksum", checksum}};
  std::cout << j.dump() << "\n";
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Nexmark on Flint: the event generator"};
  app.require_subcommand(1);
  nexmark_config config;
  int parallelism = 1;
  std::string out_path;

  auto* dump_cmd = app.add_subcommand("dump", "write the events as JSON lines");
  auto* throughput_cmd =
    app.add_subcommand("throughput", "measure the generator alone on one thread");
  for (auto* cmd : {dump_cmd, throughput_cmd}) {
    cmd->add_option("--events", config.events_num, "events to make (nexmark.events.num)")
      ->required()
      ->check(CLI::PositiveNumber);
    cmd->add_option("--tps", config.tps, "events per second of event time (nexmark.tps)")
      ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", config.seed, "seed of the events' random streams");
    cmd->add_option("--base-time", config.base_time, "event time of event 0, epoch ms");
  }
  dump_cmd->add_option("--parallelism", parallelism, "threads making the events")
    ->check(CLI::PositiveNumber);
  dump_cmd->add_option("--out", out_path, "file to write ('-': standard output)")->required();
  CLI11_PARSE(app, argc, argv);

  if (*throughput_cmd) {
    throughput(config);
    return 0;
  }
  if (out_path == "-") {
    dump(config, parallelism, std::cout);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::cerr << "flint-nexmark: cannot write " << out_path << "\n";
    return 1;
  }
  dump(config, parallelism, out);
  out.close();
  if (!out) {
    std::cerr << "flint-nexmark: writing " << out_path << " failed\n";
    return 1;
  }
  return 0;
}
