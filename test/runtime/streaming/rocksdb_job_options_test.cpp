// A job's own state.backend.rocksdb.* keys reach its tasks: WordCount on the MiniCluster with
// state.backend.type: rocksdb opens each keyed subtask's RocksDB instance with the job's write
// buffer and cache size, as the backend's "Using RocksDB options" log line reports them (RocksDB's
// own view of the instance).

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/common/logging.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <fstream>
#include <string>
#include <vector>

using namespace flint;

namespace {

/// The "Using RocksDB options" lines of one WordCount run with `config` (parallelism 2).
std::vector<std::string> rocksdb_option_lines(const api::configuration& config) {
  test::temp_path dir("rocksdb_job_options");
  std::filesystem::create_directories(dir.path);
  {
    std::ofstream in(dir.path / "input.txt");
    for (int i = 0; i < 200; ++i)
      in << "to be or not to be " << i << "\n";
  }
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(4096);
  configure_logging({ring}, spdlog::level::info);
  api::stream_execution_environment env(config);
  examples::build_wordcount(env, {(dir.path / "input.txt").string(),
                                  (dir.path / "output").string()});
  auto stream = env.get_stream_graph("rocksdb options");
  auto job = env.get_job_graph("rocksdb options");
  REQUIRE(stream);
  REQUIRE(job);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(std::make_shared<const graph::stream_graph>(std::move(*stream)),
                                std::make_shared<const graph::job_graph>(std::move(*job)),
                                std::chrono::minutes(2));
  configure_logging({std::make_shared<spdlog::sinks::stderr_sink_mt>()}, spdlog::level::info);
  REQUIRE_MESSAGE(result, (result ? "" : result.error().to_string()));
  CHECK(result->status == graph::job_status::finished);
  std::vector<std::string> lines;
  for (const auto& line : ring->last_formatted())
    if (line.find("Using RocksDB options") != std::string::npos)
      lines.push_back(line);
  return lines;
}

} // namespace

TEST_CASE("a job's own state.backend.rocksdb.* keys reach the RocksDB instances of its tasks") {
  api::configuration config{{"parallelism.default", "2"}, {"state.backend.type", "rocksdb"}};
  // Flink's defaults without the job's keys: a 64 MiB write buffer under managed memory's cap
  // (a quarter of 256 MiB), the 64 MiB cache of hot entries.
  auto defaults = rocksdb_option_lines(config);
  REQUIRE(defaults.size() >= 2);
  for (const auto& line : defaults) {
    CHECK(line.find("write_buffer_size=67108864") != std::string::npos);
    CHECK(line.find("cache.size 67108864 bytes") != std::string::npos);
  }

  config["state.backend.rocksdb.memory.managed"] = "false";
  config["state.backend.rocksdb.writebuffer.size"] = "3 mb";
  config["state.backend.rocksdb.block.cache-size"] = "5 mb";
  config["state.backend.rocksdb.cache.size"] = "0";
  auto own = rocksdb_option_lines(config);
  REQUIRE(own.size() >= 2);
  for (const auto& line : own) {
    INFO(line);
    CHECK(line.find("write_buffer_size=3145728") != std::string::npos);
    CHECK(line.find("block_cache_capacity=5242880") != std::string::npos);
    CHECK(line.find("write_buffer_manager=none") != std::string::npos);
    CHECK(line.find("cache.size 0 bytes") != std::string::npos);
  }
}
