// flint-bench run as a user runs it, on small inputs: the benchmarks are run by hand for their
// figures, so this keeps them working and honest (every update counted, the plain count and the
// design's floor over the same words; every byte of the exchange delivered) and checks their
// answers to bad flags.

#include "test/apps/cli/command_runner.hpp"
#include "test/runtime/actors/blob/blob_test_util.hpp"
#include "test/support/skip.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

using namespace std::chrono_literals;

namespace {

const std::string bench = FLINT_BENCH_BIN;

} // namespace

TEST_CASE(
  "flint-bench wordcount counts every update of a generated Zipf text and prints the floor beside it") {
  flint::test::temp_directory dir{"flint-bench-test"};
  auto input = (dir.path / "zipf.txt").string();
  auto run = flint::test::run_command(
    {bench, "wordcount", "--generate", "1", "--input", input, "--parallelism", "2"}, 120s);
  REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
  auto json = nlohmann::json::parse(run.out);
  CHECK(json["bench"] == "wordcount");
  CHECK(json["parallelism"] == 2);
  auto words = json["words"].get<long long>();
  CHECK(words > 100000); // about 1 MB of words of 2 to 9 letters
  CHECK(json["updates"].get<long long>() == words);
  CHECK(json["updates_match"] == true);
  CHECK(json["distinct"].get<long long>() > 1000);
  CHECK(json["distinct"].get<long long>() <= 10000);
  CHECK(json["floor_cpu_s"].get<double>() > 0);
  CHECK(json["flint_cpu_s"].get<double>() > 0);
  CHECK(json["peak_rss_mb"].get<double>() > 0);
  CHECK(json["thread_cpu_s"].is_array());
}

TEST_CASE("flint-bench wordcount refuses a missing input and a missing file with the reason") {
  auto no_input = flint::test::run_command({bench, "wordcount", "--parallelism", "2"}, 30s);
  CHECK(no_input.exit_code == 2);
  CHECK(no_input.err.find("--input FILE is required") != std::string::npos);
  auto missing = flint::test::run_command(
    {bench, "wordcount", "--input", "/nonexistent/flint-bench-input.txt"}, 30s);
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("cannot read /nonexistent/flint-bench-input.txt") != std::string::npos);
  auto bad_flag =
    flint::test::run_command({bench, "wordcount", "--input", "x", "--frobnicate"}, 30s);
  CHECK(bad_flag.exit_code == 2);
  CHECK(bad_flag.err.find("usage: flint-bench wordcount") != std::string::npos);
}

TEST_CASE(
  "flint-bench exchange moves every byte through one remote channel and through bare messages") {
  auto run = flint::test::run_command({bench, "exchange", "--mb", "2", "--rounds", "2"}, 120s);
  REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
  // One JSON line per round and kind, then the summary.
  std::istringstream lines(run.out);
  std::string line;
  int rounds = 0;
  nlohmann::json summary;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line);
    CHECK_FALSE(json.contains("error"));
    if (json["kind"] == "summary") {
      summary = json;
    } else {
      ++rounds;
      CHECK(json["bytes"].get<long long>() >= 2 * 1000 * 1000);
    }
  }
  CHECK(rounds == 4);
  REQUIRE_FALSE(summary.is_null());
  CHECK(summary["channel_mb_per_s"].get<double>() > 0);
  CHECK(summary["bare_mb_per_s"].get<double>() > 0);
  CHECK(summary["ratio"].get<double>() > 0);
}

TEST_CASE("flint-bench exchange --tls sends the bare messages over TLS too, as many bytes as the "
          "channel's buffers carry") {
  auto run = flint::test::run_command({bench, "exchange", "--mb", "2", "--rounds", "1", "--tls"},
                                      120s);
  if (run.exit_code == 1 && run.err.find("gen-certs") != std::string::npos) {
    flint::test::skip_test_case("no certificates: " + run.err);
    return;
  }
  REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
  std::istringstream lines(run.out);
  std::string line;
  std::map<std::string, nlohmann::json> kinds;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line);
    CHECK_FALSE(json.contains("error"));
    kinds[json["kind"].get<std::string>()] = json;
  }
  REQUIRE(kinds.size() == 5);
  for (auto kind : {"channel", "channel_tls"}) {
    CAPTURE(kind);
    CHECK(kinds[kind]["bytes"].get<long long>() == 2 * 1000 * 1000);
  }
  // 20,000 records of 100 bytes, each with its 4-byte length: 2,080,000 bytes in 64 messages.
  for (auto kind : {"bare", "bare_tls"}) {
    CAPTURE(kind);
    CHECK(kinds[kind]["messages"].get<long long>() == 64);
    CHECK(kinds[kind]["bytes"].get<long long>() == 64 * 32768);
  }
  CHECK(kinds["summary"]["tls_ratio"].get<double>() > 0);
  CHECK(kinds["summary"]["tls_bare_mb_per_s"].get<double>() > 0);
}

TEST_CASE("flint-bench exchange --only runs one kind and refuses another") {
  auto run = flint::test::run_command(
    {bench, "exchange", "--mb", "1", "--rounds", "1", "--only", "bare"}, 120s);
  REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
  CHECK(run.out.find("\"kind\":\"bare\"") != std::string::npos);
  CHECK(run.out.find("\"kind\":\"channel\"") == std::string::npos);
  auto bad = flint::test::run_command({bench, "exchange", "--only", "both"}, 30s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--only must be channel or bare") != std::string::npos);
}

TEST_CASE("flint-bench exchange's producer moves every record as a task and as a thread") {
  // --writer task (the default) writes in mailbox turns and is mailed when a buffer is back;
  // --writer thread sleeps on a condition variable. 2 MB forces both to wait on their pool.
  for (std::string writer : {"task", "thread"}) {
    CAPTURE(writer);
    auto run = flint::test::run_command(
      {bench, "exchange", "--mb", "2", "--rounds", "1", "--only", "channel", "--writer", writer},
      120s);
    REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
    std::istringstream lines(run.out);
    std::string line;
    bool seen = false;
    while (std::getline(lines, line)) {
      auto json = nlohmann::json::parse(line);
      CHECK_FALSE(json.contains("error"));
      if (json["kind"] == "channel") {
        seen = true;
        CHECK(json["bytes"].get<long long>() == 2 * 1000 * 1000);
        CHECK(json["records_per_s"].get<double>() > 0);
      }
    }
    CHECK(seen);
    // The producing process reports its writer's waits: the 10-buffer pool ran dry.
    CHECK(run.err.find("\"writer_waits_per_buffer\":0.00") == std::string::npos);
  }
  auto bad = flint::test::run_command({bench, "exchange", "--writer", "fiber"}, 30s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--writer must be task or thread") != std::string::npos);
}

TEST_CASE(
  "flint-bench failover brings the job back after a killed and after a stopped TaskManager") {
  // It spawns flint-node and flint beside itself and jobs/endless.so: built with every target.
  std::filesystem::path bin = std::filesystem::path(bench).parent_path();
  if (!std::filesystem::exists(bin / "flint-node") || !std::filesystem::exists(bin / "flint")
      || !std::filesystem::exists(bin.parent_path() / "jobs" / "endless.so")) {
    flint::test::skip_test_case("flint-node, flint or jobs/endless.so is not built");
    return;
  }
  auto run = flint::test::run_command({bench, "failover", "--quick"}, 110s);
  REQUIRE_MESSAGE(run.exit_code == 0, flint::test::describe(run));
  std::istringstream lines(run.out);
  std::string line;
  std::map<std::string, nlohmann::json> summaries;
  int rounds = 0;
  while (std::getline(lines, line)) {
    auto json = nlohmann::json::parse(line);
    CHECK(json["bench"] == "failover");
    CHECK_FALSE(json.contains("error"));
    if (json["kind"] == "round") {
      ++rounds;
      CHECK(json["attempt"].get<int>() >= 1);
    } else {
      summaries[json["detection"].get<std::string>()] = json;
    }
  }
  CHECK(rounds == 2);
  REQUIRE(summaries.count("connection_drop") == 1);
  REQUIRE(summaries.count("heartbeat_timeout") == 1);
  for (auto& [mode, json] : summaries) {
    CAPTURE(mode);
    CHECK(json["rounds"] == 1);
    CHECK(json["heartbeat_interval_ms"] == 200);
    CHECK(json["heartbeat_timeout_ms"] == 2000);
    auto total = json["kill_to_running_ms"];
    CHECK(total["median"].get<double>() > 0);
    CHECK(total["min"].get<double>() <= total["median"].get<double>());
    CHECK(total["max"].get<double>() >= total["median"].get<double>());
    for (const char* phase : {"detect", "cancel", "slots", "deploy_to_running"})
      CHECK(json["phases_ms"].contains(phase));
    CHECK(json["over_heartbeat_timeout"].get<double>() > 0);
  }
  // Only the heartbeat timeout notices a stopped TaskManager.
  CHECK(summaries["heartbeat_timeout"]["phases_ms"]["detect"].get<double>() >= 1000);
  CHECK(summaries["connection_drop"]["over_baseline"].get<double>() > 0);
}

TEST_CASE("flint-bench failover refuses bad flags with the reason") {
  auto bad = flint::test::run_command({bench, "failover", "--rounds", "0"}, 30s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--rounds needs a whole number") != std::string::npos);
  auto unknown = flint::test::run_command({bench, "failover", "--frobnicate"}, 30s);
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("usage: flint-bench failover") != std::string::npos);
}
