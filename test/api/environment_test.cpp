// Environment settings and the determinism of JobVertex ids (DESIGN.md "Job code").

#include "apps/examples/wordcount/wordcount_job.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::graph;

namespace {

/// Runs a command and returns its standard output and exit status.
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    out.append(buffer, n);
  int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::vector<std::string> ids_of_plan(const std::string& json) {
  std::vector<std::string> ids;
  auto plan = nlohmann::json::parse(json);
  for (const auto& node : plan["nodes"])
    ids.push_back(node["id"].get<std::string>());
  return ids;
}

std::vector<std::string> ids_of_job(const graph::job_graph& job) {
  std::vector<std::string> ids;
  for (const auto& v : job.vertices)
    ids.push_back(v.id.to_string());
  return ids;
}

graph::job_graph build_wordcount_in_process(int parallelism) {
  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", std::to_string(parallelism)}});
  examples::build_wordcount(env, {});
  auto job = env.get_job_graph(examples::wordcount_job_name);
  REQUIRE(job.has_value());
  return std::move(*job);
}

} // namespace

TEST_CASE("the environment reads Flink's configuration keys") {
  api::stream_execution_environment defaults;
  CHECK(defaults.parallelism() == 1);
  CHECK(defaults.max_parallelism() == -1);
  CHECK(defaults.is_chaining_enabled());
  CHECK(defaults.buffer_timeout() == 100);
  CHECK(defaults.global_data_exchange_mode() == global_data_exchange_mode::all_edges_pipelined);

  api::stream_execution_environment env(
    api::configuration{{"parallelism.default", "3"},
                       {"pipeline.max-parallelism", "64"},
                       {"pipeline.operator-chaining", "false"},
                       {"execution.buffer-timeout", "5"},
                       {"execution.global-data-exchange-mode", "all_edges_blocking"},
                       {"execution.checkpointing.interval", "1000"}});
  CHECK(env.parallelism() == 3);
  CHECK(env.max_parallelism() == 64);
  CHECK_FALSE(env.is_chaining_enabled());
  CHECK(env.buffer_timeout() == 5);
  CHECK(env.global_data_exchange_mode() == global_data_exchange_mode::all_edges_blocking);
  env.generate_sequence(0, 9).map([](const std::int64_t& x) { return x * 2; }).print();
  auto job = env.get_job_graph();
  REQUIRE(job.has_value());
  CHECK(job->vertices.size() == 3);
  CHECK(job->checkpointing.interval == 1000);
  CHECK(job->execution_config.max_parallelism == 64);
  CHECK(job->vertices[0].operators[0].buffer_timeout == 5);
  for (const auto& ds : job->data_sets)
    CHECK(ds.result_type == result_partition_type::blocking);

  CHECK_THROWS_AS(
    api::stream_execution_environment(api::configuration{{"parallelism.default", "two"}}),
    std::invalid_argument);
  CHECK_THROWS_AS(
    api::stream_execution_environment(api::configuration{{"parallelism.default", "0"}}),
    std::invalid_argument);
  CHECK_THROWS_AS(
    api::stream_execution_environment(api::configuration{{"pipeline.operator-chaining", "maybe"}}),
    std::invalid_argument);
  CHECK_THROWS_AS(api::stream_execution_environment(
                    api::configuration{{"execution.global-data-exchange-mode", "x"}}),
                  std::invalid_argument);
}

TEST_CASE("an empty program has no stream graph") {
  api::stream_execution_environment env;
  auto g = env.get_stream_graph();
  REQUIRE_FALSE(g.has_value());
  CHECK(g.error().message
        == "No operators defined in streaming topology. Cannot generate StreamGraph.");
}

TEST_CASE("job vertex ids are equal when the same program is built in two processes") {
  auto [first, first_status] = run(std::string(FLINT_WORDCOUNT_BIN) + " --plan");
  auto [second, second_status] = run(std::string(FLINT_WORDCOUNT_BIN) + " --plan --parallelism 2");
  REQUIRE(first_status == 0);
  REQUIRE(second_status == 0);
  auto first_ids = ids_of_plan(first);
  CHECK(first_ids.size() == 3);
  CHECK(first_ids == ids_of_plan(second));
  CHECK(first_ids == ids_of_job(build_wordcount_in_process(2)));
  // The job id is per submission, not per program.
  CHECK(nlohmann::json::parse(first)["jid"] != nlohmann::json::parse(second)["jid"]);
  // Ids depend on the topology and uids, not on the parallelism.
  auto [wide, wide_status] = run(std::string(FLINT_WORDCOUNT_BIN) + " --plan --parallelism 4");
  REQUIRE(wide_status == 0);
  CHECK(ids_of_plan(wide) == first_ids);
}

TEST_CASE("job vertex ids change with a uid") {
  auto build = [](const std::string& flat_map_uid, const std::string& map_uid) {
    api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
    env.from_collection(examples::wordcount_default_lines())
      .flat_map([](const std::string& line) { return examples::split_words(line); })
      .uid(flat_map_uid)
      .filter([](const std::string& w) { return !w.empty(); })
      .uid("filter-1")
      .map([](const std::string& w) { return std::tuple<std::string, std::int64_t>(w, 1); })
      .uid(map_uid)
      .key_by<0>()
      .sum<1>()
      .print();
    auto job = env.get_job_graph();
    REQUIRE(job.has_value());
    return ids_of_job(*job);
  };
  auto original = build("flatMap-1", "map-1");
  CHECK(original == ids_of_job(build_wordcount_in_process(2)));
  CHECK(build("flatMap-1", "map-1") == original);

  // The flat map chain is keyed by its head's uid; the source has no uid and stays.
  auto renamed_head = build("flatMap-2", "map-1");
  CHECK(renamed_head[1] != original[1]);
  CHECK(renamed_head[2] == original[2]);
  CHECK(renamed_head[0] == original[0]);

  // Without a uid of its own, the aggregation mixes in its input's hash, so a new uid on map
  // changes it.
  auto renamed_map = build("flatMap-1", "map-2");
  CHECK(renamed_map[0] != original[0]);
  CHECK(renamed_map[1] == original[1]);
}

TEST_CASE("two operators with one uid are refused") {
  api::stream_execution_environment env;
  env.generate_sequence(0, 1)
    .uid("same")
    .map([](const std::int64_t& x) { return x; })
    .uid("same")
    .print();
  auto job = env.get_job_graph();
  REQUIRE_FALSE(job.has_value());
  CHECK(job.error().message.find("Hash collision on user-specified ID \"same\"")
        != std::string::npos);
}

TEST_CASE("the wordcount program prints the plan of its file source and text sink") {
  auto [plan, status] = run(std::string(FLINT_WORDCOUNT_BIN)
                            + " --plan --input /tmp/in.txt --output /tmp/out --parallelism 3");
  REQUIRE(status == 0);
  auto json = nlohmann::json::parse(plan);
  // The file is read in parallel, so the reader chains with the tokenizer.
  REQUIRE(json["nodes"].size() == 2);
  CHECK(json["nodes"][0]["description"] == "aggregation -> Sink: Unnamed");
  CHECK(json["nodes"][0]["parallelism"] == 3);
  CHECK(json["nodes"][1]["description"]
        == "Source: Custom File Source -> Flat Map -> Filter -> Map");
  CHECK(json["nodes"][1]["parallelism"] == 3);

  // Without --plan it runs on the embedded MiniCluster: the built-in text, printed with the
  // subtask prefix of parallelism 2.
  auto [counts, ran] = run(std::string(FLINT_WORDCOUNT_BIN) + " 2>/dev/null");
  CHECK(ran == 0);
  CHECK(counts.find("> (hamlet") == std::string::npos);
  CHECK(counts.find("> (question,1)") != std::string::npos);
  auto [usage, refused] = run(std::string(FLINT_WORDCOUNT_BIN) + " --plan --parallelism 0 2>&1");
  CHECK(refused != 0);
}

TEST_CASE("a rebuilt program is checked against the submitted job graph") {
  auto submitted = build_wordcount_in_process(2);
  CHECK(check_same_program(submitted, build_wordcount_in_process(2)).has_value());

  auto wider = check_same_program(submitted, build_wordcount_in_process(3));
  REQUIRE_FALSE(wider.has_value());
  CHECK(wider.error().message.find("has parallelism 3 instead of 2") != std::string::npos);

  // One extra operator in front shifts every StreamNode id: the rebuilt graph must be refused.
  api::stream_execution_environment env(api::configuration{{"parallelism.default", "2"}});
  env.generate_sequence(0, 1).print();
  examples::build_wordcount(env, {});
  auto shifted = env.get_job_graph(examples::wordcount_job_name);
  REQUIRE(shifted.has_value());
  auto refused = check_same_program(submitted, *shifted);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.starts_with("the rebuilt program differs from the submitted one"));
}

TEST_CASE(
  "a job's restart strategy and failover keys become the job's own settings in its JobGraph") {
  api::configuration config{{"restart-strategy.type", "failure-rate"},
                            {"restart-strategy.failure-rate.delay", "2 s"},
                            {"jobmanager.execution.failover-strategy", "full"},
                            {"parallelism.default", "2"}};
  api::stream_execution_environment env(config);
  env.generate_sequence(1, 10).print();
  auto job = env.get_job_graph();
  REQUIRE(job.has_value());
  const auto& own = job->execution_config.job_configuration;
  CHECK(own.size() == 3);
  CHECK(own.at("restart-strategy.type") == "failure-rate");
  CHECK(own.at("jobmanager.execution.failover-strategy") == "full");
  CHECK(own.count("parallelism.default") == 0);

  // set_restart_strategy replaces the whole strategy, keeping the failover key.
  env.set_restart_strategy(api::restart_strategies::exponential_delay_restart(
    std::chrono::milliseconds(10), std::chrono::milliseconds(100), 2.0, std::chrono::hours(1),
    0.0));
  const auto& now = env.job_configuration();
  CHECK(now.at("restart-strategy.type") == "exponential-delay");
  CHECK(now.at("restart-strategy.exponential-delay.initial-backoff") == "10 ms");
  CHECK(now.at("restart-strategy.exponential-delay.backoff-multiplier") == "2");
  CHECK(now.count("restart-strategy.failure-rate.delay") == 0);
  CHECK(now.at("jobmanager.execution.failover-strategy") == "full");
  env.set_restart_strategy(api::restart_strategies::no_restart());
  CHECK(env.job_configuration().at("restart-strategy.type") == "none");
  CHECK(env.job_configuration().size() == 2);
}

TEST_CASE(
  "execution.runtime-mode BATCH makes every exchange blocking, and a bad mode is refused naming the key") {
  api::stream_execution_environment batch(api::configuration{{"execution.runtime-mode", "batch"}});
  CHECK(batch.global_data_exchange_mode() == graph::global_data_exchange_mode::all_edges_blocking);
  api::stream_execution_environment streaming(
    api::configuration{{"execution.runtime-mode", "STREAMING"}});
  CHECK(streaming.global_data_exchange_mode()
        == graph::global_data_exchange_mode::all_edges_pipelined);
  api::stream_execution_environment lower(
    api::configuration{{"execution.runtime-mode", "BATCH"},
                       {"execution.global-data-exchange-mode", "FORWARD_EDGES_PIPELINED"}});
  CHECK(lower.global_data_exchange_mode()
        == graph::global_data_exchange_mode::forward_edges_pipelined);
  try {
    api::stream_execution_environment bad(
      api::configuration{{"execution.runtime-mode", "SOMETIMES"}});
    FAIL("accepted a bad runtime mode");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("execution.runtime-mode") != std::string::npos);
  }
}
