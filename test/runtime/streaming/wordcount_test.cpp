// The seed's WordCount end to end on the MiniCluster: its final count per word equals a plain count
// of the same generated input, and every word yields exactly one update.

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "apps/examples/wordcount/words.hpp"
#include "test/runtime/streaming/streaming_test_util.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

using namespace flint;

namespace {

/// A few MB of text: a fixed-seed Zipf-like choice of 3000 words with mixed case, digits,
/// underscores, punctuation, non-ASCII bytes and CRLF line ends.
std::string generate_text(std::size_t bytes) {
  std::mt19937_64 rng(20261129);
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
  std::vector<std::string> vocabulary;
  for (int i = 0; i < 3000; ++i) {
    std::string w;
    auto len = 1 + rng() % 9;
    for (std::size_t k = 0; k < len; ++k)
      w += letters[rng() % letters.size()];
    vocabulary.push_back(w);
  }
  const std::vector<std::string> separators = {" ",  " ", " ",          ", ",  "--",
                                               "; ", "'", " \xc3\xa9 ", "!  ", "\t"};
  std::string text;
  text.reserve(bytes + 256);
  std::size_t on_line = 0;
  while (text.size() < bytes) {
    // Zipf-ish: small indices much more often.
    auto r = static_cast<double>(rng() % 1000000) / 1000000.0;
    auto index = static_cast<std::size_t>(r * r * r * static_cast<double>(vocabulary.size()));
    text += vocabulary[index % vocabulary.size()];
    text += separators[rng() % separators.size()];
    if (++on_line == 12) {
      text += (rng() % 4 == 0) ? "\r\n" : "\n";
      on_line = 0;
    }
  }
  return text;
}

/// An independent count: a word is a run of ASCII letters, digits and '_', lower-cased.
std::unordered_map<std::string, std::int64_t> plain_count(const std::string& text,
                                                          std::int64_t& words) {
  std::unordered_map<std::string, std::int64_t> counts;
  std::string word;
  words = 0;
  auto end_word = [&] {
    if (!word.empty()) {
      ++counts[word];
      ++words;
      word.clear();
    }
  };
  for (char c : text) {
    bool alnum =
      (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (alnum)
      word += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    else
      end_word();
  }
  end_word();
  return counts;
}

} // namespace

TEST_CASE(
  "WordCount's tokenizer splits as Java's \\W+ after lower-casing, reusing one word buffer") {
  auto words_of = [](std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    examples::for_each_word(text, word, [&](const std::string& w) { words.push_back(w); });
    return words;
  };
  CHECK(words_of("").empty());
  CHECK(words_of(" --, ").empty());
  CHECK(words_of("To be,--or NOT_2 b\xc3\xa9!")
        == std::vector<std::string>{"to", "be", "or", "not_2", "b"});
  // Longer than a string's inline buffer, then short again: the buffer shrinks with the word.
  CHECK(words_of("Supercalifragilisticexpialidocious_XX a")
        == std::vector<std::string>{"supercalifragilisticexpialidocious_xx", "a"});
  CHECK(words_of("\ttab\r\nend") == std::vector<std::string>{"tab", "end"});
  // Java's split yields one empty string for a line without words; the job filters it out.
  CHECK(examples::split_words("") == std::vector<std::string>{""});
  CHECK(examples::split_words("...") == std::vector<std::string>{""});
  CHECK(examples::split_words("a.B") == std::vector<std::string>{"a", "b"});

  auto text = generate_text(256 * 1024);
  std::int64_t expected_words = 0;
  auto expected = plain_count(text, expected_words);
  std::unordered_map<std::string, std::int64_t> counts;
  std::int64_t words = 0;
  std::string word;
  examples::for_each_word(text, word, [&](const std::string& w) {
    ++counts[w];
    ++words;
  });
  CHECK(words == expected_words);
  CHECK(counts == expected);
}

namespace {

struct parsed_output {
  std::unordered_map<std::string, std::int64_t> last;
  std::int64_t updates = 0;
  bool in_order = true;
};

/// Reads `(word,n)` lines; a key lives in one subtask, so its last line is its final count.
void parse_counts(const std::filesystem::path& file, parsed_output& out) {
  std::ifstream in(file);
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    REQUIRE(line.size() > 3);
    REQUIRE(line.front() == '(');
    REQUIRE(line.back() == ')');
    auto comma = line.rfind(',');
    auto word = line.substr(1, comma - 1);
    auto n = std::stoll(line.substr(comma + 1, line.size() - comma - 2));
    auto& last = out.last[word];
    if (n != last + 1)
      out.in_order = false;
    last = n;
    ++out.updates;
  }
}

/// The 3 MB input of the end-to-end runs, and its plain count.
const std::string& wordcount_text() {
  static const std::string text = generate_text(3 * 1024 * 1024);
  return text;
}

/// `remote`: each TaskExecutor has its own streaming environment with remote channels, so every
/// channel between the two goes through a partition request server and CAF's middleman.
/// `batch`: every exchange is BLOCKING (ALL_EDGES_BLOCKING) on a network memory of 256 KiB, a
/// twelfth of the input, with 256 KiB of heap for blocking partitions: the rest of the shuffled
/// data goes through spill files.
void run_wordcount(int parallelism, int task_managers, bool remote = false, bool batch = false) {
  const auto& text = wordcount_text();
  static std::int64_t words = 0;
  static const auto expected = plain_count(text, words);

  auto suffix = std::to_string(parallelism) + "_" + std::to_string(task_managers)
    + (remote ? "_remote" : "") + (batch ? "_batch" : "");
  test::temp_path input("wordcount_in_" + suffix);
  test::temp_path output("wordcount_out_" + suffix);
  test::temp_path spill("wordcount_spill_" + suffix);
  {
    std::ofstream f(input.path, std::ios::binary);
    f << text;
  }

  api::configuration config{{"parallelism.default", std::to_string(parallelism)}};
  if (batch)
    config["execution.global-data-exchange-mode"] = "ALL_EDGES_BLOCKING";
  api::stream_execution_environment env(config);
  examples::build_wordcount(env, {input.path.string(), output.path.string()});
  auto program = test::graphs_of(env);
  if (batch)
    for (const auto& data_set : program.job->data_sets)
      REQUIRE(data_set.result_type == graph::result_partition_type::blocking);

  streaming::local_cluster_options options;
  options.task_managers = task_managers;
  options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
  options.remote_channels = remote;
  if (batch) {
    options.network.segment_size = 4 * 1024;
    options.network.network_memory = 256 * 1024;
    options.network.blocking_shuffle_memory = 256 * 1024;
    std::filesystem::create_directories(spill.path);
    options.network.tmp_dirs = {spill.path.string()};
    REQUIRE(text.size() >= 10 * options.network.network_memory);
  }
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(4));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  parsed_output counted;
  if (parallelism == 1) {
    REQUIRE(std::filesystem::is_regular_file(output.path));
    parse_counts(output.path, counted);
  } else {
    REQUIRE(std::filesystem::is_directory(output.path));
    for (int i = 1; i <= parallelism; ++i)
      parse_counts(output.path / std::to_string(i), counted);
  }
  CHECK(counted.updates == words);
  CHECK(counted.in_order);
  CHECK(counted.last.size() == expected.size());
  CHECK(counted.last == expected);
  if (remote) {
    // Subtasks spread over both TaskExecutors, so the keyBy exchange crossed between them.
    REQUIRE(cluster.num_environments() == 2);
    for (std::size_t i = 0; i < 2; ++i)
      CHECK(test::remote_connections(cluster.streaming(i)) > 0);
  }
  test::check_resources_released(cluster);
  if (batch) {
    // The job's blocking partitions went with the job: no spill file, no heap kept.
    for (std::size_t i = 0; i < cluster.num_environments(); ++i) {
      auto& shuffle = cluster.streaming(i).shuffle();
      CHECK(shuffle.blocking_memory().reserved() == 0);
      auto root = shuffle.spill_files().root(0);
      // A spill file goes when its last reader lets go: a remote server's reader may still be
      // closing (milliseconds; under AddressSanitizer on a loaded machine, longer). A file left
      // behind for good would not go at all.
      auto gone = [&] { return !std::filesystem::exists(root) || std::filesystem::is_empty(root); };
      for (int wait = 0; wait < 500 && !gone(); ++wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      CHECK_MESSAGE(gone(), root.string());
    }
  }
}

/// WordCount checkpointing every 50 ms (state in the JobMaster's memory: no checkpoint
/// directory) writes through the exactly-once file sink: part files committed with the
/// checkpoints, every one visible at the end, one update per word.
void run_checkpointed_wordcount(int parallelism, int task_managers) {
  const auto& text = wordcount_text();
  static std::int64_t words = 0;
  static const auto expected = plain_count(text, words);
  auto suffix = std::to_string(parallelism) + "_" + std::to_string(task_managers) + "_checkpointed";
  test::temp_path input("wordcount_in_" + suffix);
  test::temp_path output("wordcount_out_" + suffix);
  {
    std::ofstream f(input.path, std::ios::binary);
    f << text;
  }
  api::configuration config{{"parallelism.default", std::to_string(parallelism)},
                            {"execution.checkpointing.interval", "50 ms"}};
  api::stream_execution_environment env(config);
  examples::build_wordcount(env, {input.path.string(), output.path.string()});
  auto program = test::graphs_of(env);
  REQUIRE(program.job->checkpointing.interval == 50);

  streaming::local_cluster_options options;
  options.task_managers = task_managers;
  options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
  options.remote_channels = task_managers > 1;
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(4));
  REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);

  REQUIRE(std::filesystem::is_directory(output.path));
  parsed_output counted;
  std::size_t parts = 0;
  for (const auto& entry : std::filesystem::directory_iterator(output.path)) {
    auto name = entry.path().filename().string();
    CHECK_MESSAGE(name.starts_with("part-"), name); // nothing in progress or pending is left
    ++parts;
    parsed_output file;
    parse_counts(entry.path(), file);
    counted.updates += file.updates;
    for (const auto& [word, n] : file.last)
      counted.last[word] = std::max(counted.last[word], n);
  }
  // At least one committed part per subtask. How many more depends on how many 50 ms checkpoints
  // complete while the input flows, which a loaded machine decides (CI once saw none before the
  // final one); the file sink's own tests roll parts at chosen checkpoints.
  CHECK(parts >= static_cast<std::size_t>(parallelism));
  CHECK(counted.updates == words);
  CHECK(counted.last == expected);
  test::check_resources_released(cluster);
}

/// Two WordCounts of one topology (so of equal job vertex ids) submitted together to one
/// TaskExecutor with a slot for each of their subtasks: both run at once, and each counts its own
/// input exactly through its own keyBy exchange.
void run_two_wordcounts_at_once() {
  const auto& text = wordcount_text();
  static std::int64_t words = 0;
  static const auto expected = plain_count(text, words);
  // The second input is the first twice over, so a record crossing into the other job shows.
  const std::string doubled = text + text;
  test::temp_path input_a("two_wordcounts_in_a");
  test::temp_path input_b("two_wordcounts_in_b");
  test::temp_path output_a("two_wordcounts_out_a");
  test::temp_path output_b("two_wordcounts_out_b");
  std::ofstream(input_a.path, std::ios::binary) << text;
  std::ofstream(input_b.path, std::ios::binary) << doubled;

  auto program_of = [](const test::temp_path& input, const test::temp_path& output) {
    api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
    examples::build_wordcount(env, {input.path.string(), output.path.string()});
    return test::graphs_of(env);
  };
  auto a = program_of(input_a, output_a);
  auto b = program_of(input_b, output_b);
  REQUIRE(a.job->job_id != b.job->job_id);
  REQUIRE(a.job->vertices.size() == b.job->vertices.size());
  for (std::size_t v = 0; v < a.job->vertices.size(); ++v)
    REQUIRE(a.job->vertices[v].id == b.job->vertices[v].id);

  streaming::local_cluster_options options;
  options.task_managers = 1;
  options.slots_per_task_manager = 4;
  streaming::local_cluster cluster(options);
  REQUIRE(cluster.submit(a.stream, a.job).has_value());
  REQUIRE(cluster.submit(b.stream, b.job).has_value());
  for (const auto* program : {&a, &b}) {
    auto result = cluster.result(program->job->job_id, std::chrono::minutes(4));
    REQUIRE_MESSAGE(result.has_value(), result.error().to_string());
    REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  }

  auto counts_in = [](const test::temp_path& output) {
    parsed_output counted;
    REQUIRE(std::filesystem::is_directory(output.path));
    for (int i = 1; i <= 2; ++i)
      parse_counts(output.path / std::to_string(i), counted);
    return counted;
  };
  auto counted_a = counts_in(output_a);
  CHECK(counted_a.updates == words);
  CHECK(counted_a.in_order);
  CHECK(counted_a.last == expected);
  auto counted_b = counts_in(output_b);
  CHECK(counted_b.updates == 2 * words);
  CHECK(counted_b.in_order);
  auto expected_b = expected;
  for (auto& [word, n] : expected_b)
    n *= 2;
  CHECK(counted_b.last == expected_b);
  test::check_resources_released(cluster);
}

} // namespace

TEST_CASE("two wordcounts of one topology run at once on one TaskExecutor, each counting its own") {
  run_two_wordcounts_at_once();
}

TEST_CASE("a checkpointed wordcount at parallelism 2 commits its output with the checkpoints") {
  run_checkpointed_wordcount(2, 2);
}

TEST_CASE("wordcount at parallelism 1 on one TaskExecutor counts like a plain count") {
  run_wordcount(1, 1);
}
TEST_CASE("wordcount at parallelism 2 on one TaskExecutor counts like a plain count") {
  run_wordcount(2, 1);
}
TEST_CASE("wordcount at parallelism 4 on one TaskExecutor counts like a plain count") {
  run_wordcount(4, 1);
}
TEST_CASE("wordcount at parallelism 1 on two TaskExecutors counts like a plain count") {
  run_wordcount(1, 2);
}
TEST_CASE("wordcount at parallelism 2 on two TaskExecutors counts like a plain count") {
  run_wordcount(2, 2);
}
TEST_CASE("wordcount at parallelism 4 on two TaskExecutors counts like a plain count") {
  run_wordcount(4, 2);
}

TEST_CASE(
  "wordcount at parallelism 2 over remote channels between two TaskExecutors counts like a plain count") {
  run_wordcount(2, 2, true);
}
TEST_CASE(
  "wordcount at parallelism 4 over remote channels between two TaskExecutors counts like a plain count") {
  run_wordcount(4, 2, true);
}

TEST_CASE("a BATCH wordcount over twelve times its network memory counts like a plain count") {
  run_wordcount(2, 1, false, true);
}
TEST_CASE(
  "a BATCH wordcount over remote channels between two TaskExecutors counts like a plain count") {
  run_wordcount(2, 2, true, true);
}

TEST_CASE("wordcount prints the built-in text with the subtask prefix") {
  auto lines = std::make_shared<test::collected<std::string>>();
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  examples::build_wordcount(env, {});
  auto program = test::graphs_of(env);
  streaming::local_cluster_options options;
  options.slots_per_task_manager = 2;
  options.write_stdout = [lines](std::string_view text) {
    std::lock_guard<std::mutex> guard{lines->mutex};
    lines->values.emplace_back(text);
  };
  streaming::local_cluster cluster(options);
  auto result = cluster.execute(program.stream, program.job, std::chrono::minutes(2));
  REQUIRE(result.has_value());
  REQUIRE_MESSAGE(result->status == graph::job_status::finished, result->failure_cause);
  std::string all;
  for (auto& chunk : lines->values)
    all += chunk;
  // "to" occurs 13 times in the built-in lines (as "To" and "to"); its last update is the count.
  CHECK(all.find("> (to,13)\n") != std::string::npos);
  CHECK(all.find("> (question,1)\n") != std::string::npos);
  test::check_resources_released(cluster);
}
