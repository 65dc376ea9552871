/// `wordcount [--input FILE] [--output PATH [--overwrite]] [--parallelism N] [--task-managers N]
/// [--plan]`: the seed's Streaming WordCount on the embedded MiniCluster. With --plan it prints
/// the JSON execution plan instead of running.

#include "apps/examples/wordcount/wordcount_job.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>

int main(int argc, char** argv) {
  CLI::App app{"Flint Streaming WordCount"};
  std::string input;
  std::string output;
  int parallelism = 2;
  int task_managers = 1;
  bool plan = false;
  bool overwrite = false;
  app.add_option("--input", input, "text file to count words of (default: built-in lines)");
  app.add_option("--output", output, "where to write the counts (default: standard output)");
  app.add_flag("--overwrite", overwrite,
               "replace what exists at --output (by default an existing path refuses the job)");
  app.add_option("--parallelism", parallelism, "default parallelism")->check(CLI::PositiveNumber);
  app.add_option("--task-managers", task_managers, "TaskExecutors of the embedded MiniCluster")
    ->check(CLI::PositiveNumber);
  app.add_flag("--plan", plan, "print the JSON execution plan and exit");
  CLI11_PARSE(app, argc, argv);

  // Standard output carries the counts; the cluster's log lines go to standard error, warnings
  // and up unless FLINT_LOG_LEVEL says otherwise.
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  flint::configure_logging({std::make_shared<spdlog::sinks::stderr_color_sink_mt>()},
                           spdlog::level::from_str(level ? level : "warn"));

  flint::examples::wordcount_options options;
  if (!input.empty())
    options.input = input;
  if (!output.empty())
    options.output = output;
  options.overwrite = overwrite;

  try {
    flint::api::stream_execution_environment env(
      {{"parallelism.default", std::to_string(parallelism)}});
    flint::examples::build_wordcount(env, options);
    if (plan) {
      auto json = env.get_execution_plan(flint::examples::wordcount_job_name);
      if (!json) {
        std::cerr << "wordcount: " << json.error().to_string() << "\n";
        return 1;
      }
      std::cout << *json << "\n";
      return 0;
    }

    if (options.input) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(*options.input, ec)) {
        std::cerr << "wordcount: input file " << *options.input
                  << " does not exist or is not a regular file\n";
        return 1;
      }
    }
    auto stream = env.get_stream_graph(flint::examples::wordcount_job_name);
    auto job = env.get_job_graph(flint::examples::wordcount_job_name);
    if (!stream || !job) {
      std::cerr << "wordcount: " << (stream ? job.error() : stream.error()).to_string() << "\n";
      return 1;
    }

    flint::streaming::local_cluster_options cluster_options;
    cluster_options.task_managers = task_managers;
    cluster_options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
    flint::streaming::local_cluster cluster(cluster_options);
    auto result =
      cluster.execute(std::make_shared<const flint::graph::stream_graph>(std::move(*stream)),
                      std::make_shared<const flint::graph::job_graph>(std::move(*job)));
    if (!result) {
      std::cerr << "wordcount: the job could not run: " << result.error().to_string() << "\n";
      return 1;
    }
    if (result->status != flint::graph::job_status::finished) {
      std::cerr << "wordcount: the job ended " << flint::graph::to_string(result->status)
                << (result->failure_cause.empty() ? "" : ": " + result->failure_cause) << "\n";
      return 1;
    }
    std::cerr << "wordcount: job " << result->job_id.to_string() << " finished in "
              << result->net_runtime_ms << " ms\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wordcount: " << e.what() << "\n";
    return 1;
  }
}
