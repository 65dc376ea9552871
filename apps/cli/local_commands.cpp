// `flint info` and `flint run --local`: the job library's program in this process.

#include <algorithm>
#include <iostream>
#include <map>

#include "apps/cli/cli_output.hpp"
#include "apps/cli/exit_codes.hpp"
#include "apps/cli/job_commands.hpp"
#include "apps/cli/job_loader.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/graph/json_plan.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/streaming/local_cluster.hpp"

namespace flint::cli {

namespace {

expected<loaded_job> load(const cli_settings& settings, const run_options& opts) {
  auto config = job_configuration(settings, opts.parallelism);
  if (!config)
    return config.error();
  return load_job(opts.library, opts.args, *config, new_job_id(), opts.entry);
}

} // namespace

int print_info(const cli_settings& settings, const run_options& opts) {
  auto job = load(settings, opts);
  if (!job)
    return fail(job.error().message);
  std::cout << "----------------------- Execution Plan -----------------------\n"
            << graph::json_execution_plan(*job->job) << "\n"
            << "--------------------------------------------------------------" << std::endl;
  return exit_ok;
}

int run_local(const cli_settings& settings, const run_options& opts) {
  auto job = load(settings, opts);
  if (!job)
    return fail(job.error().message);
  auto task_managers = settings.config.get(config::options::local_number_taskmanager);
  if (!task_managers)
    return fail(task_managers.error().message);
  int needed = 1;
  for (const auto& v : job->job->vertices)
    needed = std::max(needed, v.parallelism);
  streaming::local_cluster_options options;
  // The embedded TaskManagers' network settings (`taskmanager.memory.*`, `io.tmp.dirs`, ...).
  std::map<std::string, std::string> values;
  for (const auto& key : settings.config.keys())
    values[key] = *settings.config.get_raw(key);
  auto network = network::network_config::from_map(values);
  if (!network)
    return fail(network.error().message);
  options.network = std::move(*network);
  options.task_managers = static_cast<int>(std::max<std::int64_t>(1, *task_managers));
  // One slot sharing group: the widest vertex decides how many slots the job takes.
  options.slots_per_task_manager = (needed + options.task_managers - 1) / options.task_managers;
  streaming::local_cluster cluster(options);
  auto id = job->job->job_id;
  if (auto sub = cluster.submit(job->stream, job->job); !sub)
    return fail("Could not submit job " + id.to_string()
                + " to the local cluster: " + sub.error().message);
  std::cout << "Job has been submitted with JobID " << id.to_string() << std::endl;
  auto result = cluster.result(id, settings.timeout.value_or(std::chrono::hours(24 * 365)));
  if (!result)
    return fail("Lost track of job " + id.to_string() + ": " + result.error().message);
  return report_result(*result);
}

} // namespace flint::cli
