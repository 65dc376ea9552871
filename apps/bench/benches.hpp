#pragma once
/// The benchmarks of `flint-bench <name> [args]`. Each prints JSON lines on stdout and returns an
/// exit code; each runs its own baseline in the same run (DESIGN.md "Testing").

#include <cstdint>
#include <filesystem>
#include <string>

namespace flint::bench {

int rpc(int argc, char** argv);
int graph(int argc, char** argv);
int cluster(int argc, char** argv);
int wordcount(int argc, char** argv);
int exchange(int argc, char** argv);
int failover(int argc, char** argv);
int ha(int argc, char** argv);
int checkpoint(int argc, char** argv);
int metrics(int argc, char** argv);
int state(int argc, char** argv);

/// The floor of keyed state in RocksDB: one thread doing a RocksDB get and put per word (WAL
/// off, default options) for the first `max_words` words of the file at `path`, in a fresh
/// instance in `dir` (removed after). False with `error` if the file or RocksDB fails.
bool rocksdb_floor(const std::string& path, std::int64_t max_words,
                   const std::filesystem::path& dir, std::int64_t& words, double& words_per_s,
                   double& words_per_cpu_s, std::string& error);

/// Words as WordCount counts them in the file at `path` (-1 if it cannot be read), for the
/// WordCount benchmarks' rates.
std::int64_t count_words(const std::string& path);
int rest(int argc, char** argv);
/// bench_window.cpp: windows on Flint vs a single-thread loop; WordCount with vs without time.
int window(int argc, char** argv);
int time_cost(int argc, char** argv);
/// bench_nexmark.cpp: Nexmark's queries, source to blackhole, events/s and per core.
int nexmark(int argc, char** argv);

} // namespace flint::bench
