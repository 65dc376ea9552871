/// `event_time_example windowed_clicks|session_window|interval_join [--parallelism N]
/// [--task-managers N] [example flags]`: an event-time example (event_time_jobs.hpp) on the
/// embedded MiniCluster, printing its results; it runs until interrupted unless --count bounds
/// its input. The job libraries build/jobs/<name>.so run the same pipelines on a cluster.

#include "apps/examples/event_time/event_time_jobs.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/streaming/local_cluster.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int positive(const std::string& flag, const std::string& value) {
  int n = 0;
  try {
    n = std::stoi(value);
  } catch (const std::exception&) {
  }
  if (n <= 0)
    throw std::invalid_argument(flag + " takes a positive number, not '" + value + "'");
  return n;
}

} // namespace

int main(int argc, char** argv) {
  const std::string usage = "usage: event_time_example windowed_clicks|session_window|interval_join "
                            "[--parallelism N] [--task-managers N] [example flags]";
  if (argc < 2) {
    std::cerr << usage << "\n";
    return 2;
  }
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  flint::configure_logging({std::make_shared<spdlog::sinks::stderr_color_sink_mt>()},
                           spdlog::level::from_str(level ? level : "warn"));
  const std::string name = argv[1];
  try {
    int parallelism = 2;
    int task_managers = 1;
    std::vector<std::string> args;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if ((a == "--parallelism" || a == "--task-managers") && i + 1 < argc)
        (a == "--parallelism" ? parallelism : task_managers) = positive(a, argv[++i]);
      else
        args.push_back(a);
    }
    flint::api::stream_execution_environment env(
      {{"parallelism.default", std::to_string(parallelism)}});
    std::string job_name;
    if (name == "windowed_clicks") {
      flint::examples::build_windowed_clicks(env, flint::examples::windowed_clicks_flags(args));
      job_name = flint::examples::windowed_clicks_job_name;
    } else if (name == "session_window") {
      flint::examples::build_session_window(env, flint::examples::session_window_flags(args));
      job_name = flint::examples::session_window_job_name;
    } else if (name == "interval_join") {
      flint::examples::build_interval_join(env, flint::examples::interval_join_flags(args));
      job_name = flint::examples::interval_join_job_name;
    } else {
      std::cerr << "event_time_example: no example named '" << name << "'; " << usage << "\n";
      return 2;
    }
    auto stream = env.get_stream_graph(job_name);
    auto job = env.get_job_graph(job_name);
    if (!stream || !job) {
      std::cerr << "event_time_example: " << (stream ? job.error() : stream.error()).to_string()
                << "\n";
      return 1;
    }
    flint::streaming::local_cluster_options options;
    options.task_managers = task_managers;
    options.slots_per_task_manager = (parallelism + task_managers - 1) / task_managers;
    flint::streaming::local_cluster cluster(options);
    auto result =
      cluster.execute(std::make_shared<const flint::graph::stream_graph>(std::move(*stream)),
                      std::make_shared<const flint::graph::job_graph>(std::move(*job)));
    if (!result) {
      std::cerr << "event_time_example: the job could not run: " << result.error().to_string()
                << "\n";
      return 1;
    }
    if (result->status != flint::graph::job_status::finished) {
      std::cerr << "event_time_example: the job ended " << flint::graph::to_string(result->status)
                << (result->failure_cause.empty() ? "" : ": " + result->failure_cause) << "\n";
      return 1;
    }
    std::cerr << "event_time_example: " << name << " finished in " << result->net_runtime_ms
              << " ms\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "event_time_example: " << e.what() << "\n";
    return 1;
  }
}
