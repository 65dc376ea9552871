/// `wordcount [--input FILE] [--output PATH] [--parallelism N] [--plan]`: the seed's Streaming
/// WordCount. With --plan it prints the JSON execution plan; running it comes with the data plane.

#include "apps/examples/wordcount/wordcount_job.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <stdexcept>

int main(int argc, char** argv) {
  CLI::App app{"Flint Streaming WordCount"};
  std::string input;
  std::string output;
  int parallelism = 2;
  bool plan = false;
  app.add_option("--input", input, "text file to count words of (default: built-in lines)");
  app.add_option("--output", output, "where to write the counts (default: standard output)");
  app.add_option("--parallelism", parallelism, "default parallelism")->check(CLI::PositiveNumber);
  app.add_flag("--plan", plan, "print the JSON execution plan and exit");
  CLI11_PARSE(app, argc, argv);

  flint::examples::wordcount_options options;
  if (!input.empty())
    options.input = input;
  if (!output.empty())
    options.output = output;

  try {
    flint::api::stream_execution_environment env({{"parallelism.default", std::to_string(parallelism)}});
    flint::examples::build_wordcount(env, options);
    if (!plan) {
      std::cerr << "wordcount: running jobs comes with the data plane; use --plan to print the execution plan\n";
      return 2;
    }
    auto json = env.get_execution_plan(flint::examples::wordcount_job_name);
    if (!json) {
      std::cerr << "wordcount: " << json.error().to_string() << "\n";
      return 1;
    }
    std::cout << *json << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "wordcount: " << e.what() << "\n";
    return 1;
  }
}
