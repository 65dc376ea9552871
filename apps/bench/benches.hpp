#pragma once
/// The benchmarks of `flint-bench <name> [args]`. Each prints JSON lines on stdout and returns an
/// exit code; each runs its own baseline in the same run (DESIGN.md "Testing").

#include <cstdint>
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

/// Words as WordCount counts them in the file at `path` (-1 if it cannot be read), for the
/// WordCount benchmarks' rates.
std::int64_t count_words(const std::string& path);
int rest(int argc, char** argv);

} // namespace flint::bench
