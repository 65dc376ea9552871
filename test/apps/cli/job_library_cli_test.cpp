// `flint info` and `flint run --local` on real job libraries (build/jobs/*.so), and the errors
// for libraries that are missing or have no entry point.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "test/apps/cli/command_runner.hpp"
#include "test/support/word_counts.hpp"

using namespace std::chrono_literals;
using flint::test::command_result;
using flint::test::describe;
using flint::test::run_command;

namespace {

const std::string flint_bin = FLINT_CLI_BIN;
const std::string jobs_dir = FLINT_JOBS_DIR;
const std::string wordcount_bin = FLINT_WORDCOUNT_BIN;

command_result run_flint(std::vector<std::string> args, std::chrono::milliseconds timeout = 60s) {
  args.insert(args.begin(), flint_bin);
  return run_command(args, timeout);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The JSON between Flink's "Execution Plan" banners.
nlohmann::json plan_of(const std::string& out) {
  auto begin = out.find('{');
  auto end = out.rfind('}');
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(out.substr(begin, end - begin + 1));
}

struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const std::string& name)
    : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE(
  "flint info prints the JSON plan of wordcount naming its operators, and submits nothing") {
  auto r =
    run_flint({"info", jobs_dir + "/wordcount.so", "--input", "/in.txt", "--output", "/out"});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(contains(r.out, "----------------------- Execution Plan -----------------------"));
  auto plan = plan_of(r.out);
  CHECK(plan["name"] == "Streaming WordCount");
  std::string operators;
  for (const auto& node : plan["nodes"])
    operators +=
      node["operator"].get<std::string>() + " | " + node["description"].get<std::string>() + "\n";
  CAPTURE(operators);
  for (const char* name :
       {"Source: Custom File Source", "Flat Map", "Filter", "Map", "aggregation", "Sink"})
    CHECK_MESSAGE(contains(operators, name), name);
}

TEST_CASE("flint info -p sets the plan's parallelism") {
  auto r = run_flint(
    {"info", "-p", "3", jobs_dir + "/wordcount.so", "--input", "/in.txt", "--output", "/out"});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto plan = plan_of(r.out);
  std::set<int> parallelisms;
  for (const auto& node : plan["nodes"])
    parallelisms.insert(node["parallelism"].get<int>());
  CHECK(parallelisms.count(3) == 1); // the keyed part; the file source stays at 1
}

TEST_CASE("flint run --local counts words like an independent count") {
  temp_dir dir("flint_cli_wordcount");
  auto text = flint::test::sample_text(200'000);
  auto input = dir.path / "in.txt";
  std::ofstream(input, std::ios::binary) << text;
  auto output = dir.path / "out";
  auto r = run_flint({"run", "--local", "-p", "2", jobs_dir + "/wordcount.so", "--input",
                      input.string(), "--output", output.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(contains(r.out, "Job has been submitted with JobID "));
  CHECK(contains(r.out, "Program execution finished"));
  CHECK(contains(r.out, " has finished."));
  CHECK(contains(r.out, "Job Runtime: "));
  auto counted = flint::test::read_counts(output);
  CHECK(counted == flint::test::plain_count(text));
}

TEST_CASE("flint run -t local -c flint_job_main runs as --local does, Flink's spelling of it") {
  temp_dir dir("flint_cli_target_local");
  auto input = dir.path / "in.txt";
  std::ofstream(input) << "to be or not to be\n";
  auto output = dir.path / "out";
  auto r = run_flint({"run", "-t", "local", "-c", "flint_job_main", jobs_dir + "/wordcount.so",
                      "--input", input.string(), "--output", output.string()});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(contains(r.out, "Program execution finished"));
  CHECK(flint::test::read_counts(output)
        == std::map<std::string, std::int64_t>{{"be", 2}, {"not", 1}, {"or", 1}, {"to", 2}});
}

TEST_CASE("flint info -c sequential plans the library's named entry; an unknown entry fails "
          "(exit 1)") {
  auto r = run_flint({"info", "-p", "3", "-c", "sequential", jobs_dir + "/wordcount.so"});
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  auto plan = plan_of(r.out);
  std::set<int> parallelisms;
  for (const auto& node : plan["nodes"])
    parallelisms.insert(node["parallelism"].get<int>());
  CHECK(parallelisms == std::set<int>{1});
  auto unknown = run_flint({"info", "-c", "nope", jobs_dir + "/wordcount.so"});
  CHECK_MESSAGE(unknown.exit_code == 1, describe(unknown));
  CHECK_MESSAGE(contains(unknown.err, "flint_job_entry_nope"), describe(unknown));
}

const std::string no_overwrite_text =
  "File or directory already exists. Existing files and directories are not overwritten in "
  "NO_OVERWRITE mode. Use OVERWRITE mode to overwrite existing files and directories.";

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("wordcount --output refuses an existing path and deletes nothing (NO_OVERWRITE)") {
  temp_dir dir("flint_wordcount_no_overwrite");
  auto input = dir.path / "in.txt";
  std::ofstream(input, std::ios::binary) << "to be or not to be\n";
  auto output = dir.path / "results";
  std::filesystem::create_directories(output);
  std::ofstream(output / "thesis.tex") << "a user's file\n";
  for (const char* parallelism : {"1", "2"}) {
    CAPTURE(parallelism);
    auto r = run_command({wordcount_bin, "--input", input.string(), "--output", output.string(),
                          "--parallelism", parallelism},
                         60s);
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, no_overwrite_text), describe(r));
    CHECK_MESSAGE(contains(r.err, output.string()), describe(r));
    CHECK(read_all(output / "thesis.tex") == "a user's file\n");
  }
  // A file at the path is refused too, and kept.
  auto file = dir.path / "counts.txt";
  std::ofstream(file) << "earlier counts\n";
  auto r = run_command({wordcount_bin, "--input", input.string(), "--output", file.string(),
                        "--parallelism", "1"},
                       60s);
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK(read_all(file) == "earlier counts\n");
  // flint run refuses it the same way, before the job is submitted.
  auto run = run_flint({"run", "--local", jobs_dir + "/wordcount.so", "--input", input.string(),
                        "--output", output.string()});
  CHECK_MESSAGE(run.exit_code == 1, describe(run));
  CHECK_MESSAGE(contains(run.err, no_overwrite_text), describe(run));
  CHECK_FALSE(contains(run.out, "Job has been submitted"));
  CHECK(read_all(output / "thesis.tex") == "a user's file\n");
  // --overwrite is the user's explicit word: the path is replaced.
  auto replaced = run_command({wordcount_bin, "--input", input.string(), "--output",
                               file.string(), "--parallelism", "1", "--overwrite"},
                              60s);
  REQUIRE_MESSAGE(replaced.exit_code == 0, describe(replaced));
  CHECK(contains(read_all(file), "(be,2)"));
}

TEST_CASE("a checkpointing WordCount adds its part files beside a file it did not write") {
  temp_dir dir("flint_wordcount_file_sink_dir");
  auto text = flint::test::sample_text(300'000);
  auto input = dir.path / "in.txt";
  std::ofstream(input, std::ios::binary) << text;
  auto output = dir.path / "results";
  std::filesystem::create_directories(output);
  std::ofstream(output / "README") << "a user's file\n";
  std::ofstream(output / ".part-notes.inprogress") << "a user's hidden file\n";
  auto r = run_flint({"run", "--local", "-p", "2", "-D", "execution.checkpointing.interval=50 ms",
                      jobs_dir + "/wordcount.so", "--input", input.string(), "--output",
                      output.string()},
                     120s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(read_all(output / "README") == "a user's file\n");
  CHECK(read_all(output / ".part-notes.inprogress") == "a user's hidden file\n");
  // The job's committed parts beside them hold every update once: a word's highest count is its
  // total, and it has one line per occurrence.
  std::map<std::string, std::int64_t> highest;
  std::map<std::string, std::int64_t> lines;
  std::size_t parts = 0;
  for (const auto& e : std::filesystem::directory_iterator(output)) {
    if (!e.path().filename().string().starts_with("part-"))
      continue;
    ++parts;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      auto comma = line.rfind(',');
      REQUIRE_MESSAGE((line.size() > 2 && comma != std::string::npos), line);
      auto word = line.substr(1, comma - 1);
      std::int64_t n = std::stoll(line.substr(comma + 1, line.size() - comma - 2));
      highest[word] = std::max(highest[word], n);
      ++lines[word];
    }
  }
  CHECK(parts > 0);
  auto expected = flint::test::plain_count(text);
  CHECK(highest == expected);
  CHECK(lines == expected);
}

TEST_CASE(
  "flint run refuses a job whose restart setting is bad, naming the key, and runs the next") {
  temp_dir dir("flint_cli_bad_restart");
  auto input = dir.path / "in.txt";
  std::ofstream(input, std::ios::binary) << "to be or not to be\n";
  const std::vector<std::pair<std::string, std::string>> bad{
    {"restart-strategy.type=sometimes", "restart-strategy.type"},
    {"restart-strategy.fixed-delay.attempts=-3", "restart-strategy.fixed-delay.attempts"},
    {"restart-strategy.fixed-delay.delay=soon", "restart-strategy.fixed-delay.delay"}};
  for (const auto& [setting, key] : bad) {
    CAPTURE(setting);
    const std::string strategy = key == "restart-strategy.type"
      ? "parallelism.default=1"
      : "restart-strategy.type=fixed-delay";
    auto r = run_flint({"run", "--local", "-D", strategy, "-D", setting, jobs_dir + "/wordcount.so",
                        "--input", input.string()});
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, key), describe(r));
  }
  auto ok = run_flint({"run", "--local", "-D", "restart-strategy.type=fixed-delay",
                       jobs_dir + "/wordcount.so", "--input", input.string()});
  CHECK_MESSAGE(ok.exit_code == 0, describe(ok));
}

TEST_CASE(
  "a BATCH WordCount through flint run --local finishes and counts like an independent count") {
  temp_dir dir("flint_cli_batch");
  auto text = flint::test::sample_text(2'000'000);
  auto input = dir.path / "in.txt";
  std::ofstream(input, std::ios::binary) << text;
  auto output = dir.path / "out";
  auto r = run_flint(
    {"run", "--local", "-D", "execution.global-data-exchange-mode=ALL_EDGES_BLOCKING", "-p", "2",
     jobs_dir + "/wordcount.so", "--input", input.string(), "--output", output.string()},
    120s);
  REQUIRE_MESSAGE(r.exit_code == 0, describe(r));
  CHECK(flint::test::read_counts(output) == flint::test::plain_count(text));
}

TEST_CASE("a job library that does not exist is a clear failure (exit 1)") {
  for (const char* action : {"info", "run"}) {
    CAPTURE(action);
    auto r = run_flint({action, "/no/such/job.so"});
    CHECK_MESSAGE(r.exit_code == 1, describe(r));
    CHECK_MESSAGE(contains(r.err, "/no/such/job.so"), describe(r));
  }
}

TEST_CASE("a shared object without the entry point is a clear failure (exit 1)") {
  auto r = run_flint({"run", "--local", jobs_dir + "/no_entry.so"});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "no_entry.so"), describe(r));
  CHECK_MESSAGE(contains(r.err, "flint_job_main"), describe(r));
}

TEST_CASE("a file that is not a shared object is a clear failure (exit 1)") {
  temp_dir dir("flint_cli_notso");
  auto fake = dir.path / "fake.so";
  std::ofstream(fake) << "not an ELF file\n";
  auto r = run_flint({"info", fake.string()});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "fake.so"), describe(r));
}

TEST_CASE("the job's own argument errors reach the user (exit 1)") {
  auto r = run_flint({"info", jobs_dir + "/wordcount.so", "--bogus"});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "unexpected argument '--bogus'"), describe(r));
}

TEST_CASE("flint options given after the library reach the job, and the error says where they go") {
  auto r = run_flint({"info", jobs_dir + "/wordcount.so", "--input", "/in.txt", "-p", "2"});
  CHECK_MESSAGE(r.exit_code == 1, describe(r));
  CHECK_MESSAGE(contains(r.err, "unexpected argument '-p'"), describe(r));
  CHECK_MESSAGE(contains(r.err, "go before the job library"), describe(r));
}
