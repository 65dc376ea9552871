#include "apps/cli/job_commands.hpp"

#include <cstdio>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "apps/cli/cli_output.hpp"
#include "apps/cli/cluster_client.hpp"
#include "apps/cli/exit_codes.hpp"
#include "apps/cli/job_loader.hpp"
#include "runtime/state/checkpoint_storage.hpp"

#if FLINT_HAVE_JOB_LIBRARY
#include "api/job_library.hpp"
#include "runtime/streaming/output_initialization.hpp"
#endif

namespace flint::cli {

namespace {

using clock_type = std::chrono::steady_clock;

/// A job id from the command line; a malformed one is a usage error.
std::optional<graph::job_id> parse_job_id(const std::string& text) {
  auto id = graph::job_id::from_string(text);
  if (!id) {
    std::cerr << "flint: '" << text
              << "' is not a JobID (32 hex digits, as `flint list` prints them)" << std::endl;
    return std::nullopt;
  }
  return *id;
}

/// The message for an error of a call about `job`.
std::string about_job(const error& e, const graph::job_id& job, const cli_settings& settings) {
  if (e.code == errc::not_found)
    return "Could not find job " + job.to_string() + " at the JobManager at " + where(settings)
      + " (" + e.message + ")";
  return e.message;
}

/// Waits for a submitted job's end by polling its status, so a JobManager that goes away is
/// noticed within one ask timeout instead of leaving a long ask hanging.
expected<dispatcher::job_result> await_result(cluster_client& client, const graph::job_id& job,
                                              std::optional<std::chrono::nanoseconds> limit) {
  auto deadline = limit ? clock_type::now() + *limit : clock_type::time_point::max();
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    auto status = client.job_status(job);
    if (!status && client.uses_zookeeper()) {
      // The leading JobManager may be gone: with HA another one takes over and recovers the
      // job, so follow the leader ZooKeeper names (Flink's RestClusterClient retries too).
      std::fprintf(stderr, "Lost the Dispatcher (%s); waiting for the next leader.\n",
                   status.error().message.c_str());
      auto wait = std::chrono::nanoseconds(std::chrono::minutes(5));
      if (limit)
        wait = std::max(deadline - clock_type::now(), clock_type::duration::zero());
      if (auto back = client.reconnect_dispatcher(wait); back) {
        std::fprintf(stderr, "Following the new Dispatcher leader.\n");
        continue;
      } else
        return make_error(back.error().code,
                          "Lost track of job " + job.to_string() + ": " + back.error().message);
    }
    if (!status)
      return make_error(status.error().code,
                        "Lost track of job " + job.to_string() + ": " + status.error().message);
    if (graph::is_globally_terminal(*status))
      return client.job_result(job, client.settings().ask_timeout);
    if (limit && clock_type::now() + pause > deadline)
      return make_error(errc::timeout,
                        "Job " + job.to_string() + " did not finish within " + describe(*limit)
                          + " (--timeout); it is still " + std::string(graph::to_string(*status)));
    std::this_thread::sleep_for(pause);
    // Short jobs end in milliseconds; long ones need not be asked five times a second.
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

} // namespace

int run_on_cluster(const cli_settings& settings, const run_options& opts) {
#if FLINT_HAVE_JOB_LIBRARY
  auto config = job_configuration(settings, opts.parallelism);
  if (!config)
    return fail(config.error().message);
  auto id = new_job_id();
  auto job = load_job(opts.library, opts.args, *config, id, opts.entry);
  if (!job)
    return fail(job.error().message);
  if (auto outputs = streaming::initialize_outputs(*job->stream); !outputs)
    return fail("Could not submit job " + id.to_string() + ": " + outputs.error().message);

  // Flink's SavepointRestoreSettings travel with the JobGraph: the JobMaster reads the state.
  auto graph = *job->job;
  graph.savepoint_restore = {opts.from_savepoint, opts.allow_non_restored_state, opts.claim_mode};
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  auto blob_server = client.connect("blob_server", "JobManager's blob server");
  if (!blob_server)
    return fail(blob_server.error().message);
  if (auto up =
        api::upload_job(client.system(), *blob_server, opts.library, opts.args, *config, graph,
                        opts.entry);
      !up)
    return fail("Could not upload the job library " + opts.library + " to " + where(settings) + ": "
                + up.error().message);
  if (auto sub = client.submit_job(graph); !sub)
    return fail("Could not submit job " + id.to_string() + ": " + sub.error().message);
  std::cout << "Job has been submitted with JobID " << id.to_string() << std::endl;
  if (opts.detached)
    return exit_ok;
  auto result = await_result(client, id, settings.timeout);
  if (!result)
    return fail(result.error().message);
  return report_result(*result);
#else
  return fail("this flint was built without job library support; cannot run " + opts.library);
#endif
}

int list_jobs(const cli_settings& settings, list_selection selection) {
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  std::cout << "Waiting for response..." << std::endl;
  auto jobs = client.list_jobs();
  if (!jobs)
    return fail("Could not list the jobs: " + jobs.error().message);
  std::cout << format_job_list(*jobs, selection) << std::flush;
  return exit_ok;
}

int job_status(const cli_settings& settings, const std::string& job_id) {
  auto id = parse_job_id(job_id);
  if (!id)
    return exit_usage;
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  auto report = client.job_status_report(*id);
  if (!report)
    return fail(about_job(report.error(), *id, settings));
  // A job whose tasks do not all run: the slots the cluster has free against those it needs.
  std::optional<resource_manager::resource_overview> cluster;
  if (!graph::is_terminal(report->status) && report->tasks_running < report->tasks)
    if (auto overview = client.resource_overview())
      cluster = *overview;
  std::cout << format_job_status(*id, *report, cluster) << std::flush;
  return exit_ok;
}

int cancel_job(const cli_settings& settings, const std::string& job_id) {
  auto id = parse_job_id(job_id);
  if (!id)
    return exit_usage;
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  std::cout << "Cancelling job " << id->to_string() << "." << std::endl;
  auto cancelled = client.cancel_job(*id);
  if (!cancelled)
    return fail(about_job(cancelled.error(), *id, settings));
  std::cout << "Cancelled job " << id->to_string() << "." << std::endl;
  return exit_ok;
}

int savepoint_job(const cli_settings& settings, const std::string& job_id,
                  const std::string& target_dir, bool stop, bool drain) {
  auto id = parse_job_id(job_id);
  if (!id)
    return exit_usage;
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  if (stop && drain)
    std::cout << "Draining job \"" << id->to_string() << "\" with a savepoint." << std::endl;
  else if (stop)
    std::cout << "Suspending job \"" << id->to_string() << "\" with a savepoint." << std::endl;
  else
    std::cout << "Triggering savepoint for job " << id->to_string() << "." << std::endl
              << "Waiting for response..." << std::endl;
  // A savepoint takes as long as its state takes to write: wait for it unless --timeout says.
  auto timeout = settings.timeout.value_or(std::chrono::hours(1));
  auto path = client.trigger_savepoint(*id, target_dir, stop, timeout, drain);
  if (!path)
    return fail(about_job(path.error(), *id, settings));
  std::cout << "Savepoint completed. Path: file:" << *path << std::endl;
  if (!stop)
    std::cout << "You can resume your program from this savepoint with the run command."
              << std::endl;
  return exit_ok;
}

int dispose_savepoint(const std::string& given) {
  namespace fs = std::filesystem;
  std::cout << "Disposing savepoint '" << given << "'." << std::endl;
  fs::path path(given);
  auto dir = path.filename() == "_metadata" ? path.parent_path() : path;
  std::error_code ec;
  auto status = fs::symlink_status(dir, ec);
  if (ec || !fs::exists(status))
    return fail("Cannot dispose of savepoint '" + given + "': " + dir.string()
                + " does not exist");
  if (fs::is_symlink(status) || !fs::is_directory(status))
    return fail("Cannot dispose of savepoint '" + given + "': " + dir.string()
                + " is not a directory (a savepoint is a directory holding its _metadata)");
  auto metadata_status = fs::symlink_status(dir / "_metadata", ec);
  if (ec || !fs::is_regular_file(metadata_status))
    return fail("Cannot dispose of savepoint '" + given + "': " + dir.string()
                + " holds no _metadata file, so it is not a savepoint; nothing was deleted");
  // Only what reads as Flint's own savepoint or checkpoint goes.
  if (auto metadata = state::load_checkpoint_metadata(dir.string()); !metadata)
    return fail("Cannot dispose of savepoint '" + given + "': " + metadata.error().message
                + "; nothing was deleted");
  fs::remove_all(dir, ec);
  if (ec)
    return fail("Could not delete savepoint " + dir.string() + ": " + ec.message());
  std::cout << "Savepoint '" << given << "' disposed." << std::endl;
  return exit_ok;
}

int checkpoint_job(const cli_settings& settings, const std::string& job_id, bool full) {
  auto id = parse_job_id(job_id);
  if (!id)
    return exit_usage;
  cluster_client client(settings);
  if (auto ok = client.connect_dispatcher(); !ok)
    return fail(ok.error().message);
  std::cout << "Triggering " << (full ? "full " : "") << "checkpoint for job "
            << id->to_string() << "." << std::endl;
  if (full)
    std::cerr << "flint: Flint cannot ask for a full checkpoint: the checkpoint is of the job's "
                 "configured kind (incremental when execution.checkpointing.incremental is set)"
              << std::endl;
  std::cout << "Waiting for response..." << std::endl;
  auto checkpoint = client.trigger_checkpoint(*id);
  if (!checkpoint)
    return fail("Could not trigger a checkpoint of job " + id->to_string() + ": "
                + about_job(checkpoint.error(), *id, settings));
  // The trigger answers once the checkpoint started; its end shows in the job's status.
  auto limit = settings.timeout.value_or(std::chrono::hours(1));
  auto deadline = clock_type::now() + limit;
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    auto report = client.job_status_report(*id);
    if (!report)
      return fail("Lost track of checkpoint " + std::to_string(*checkpoint) + " of job "
                  + id->to_string() + ": " + report.error().message);
    for (const auto& entry : report->checkpoint_history) {
      if (entry.id != *checkpoint || entry.status == "IN_PROGRESS")
        continue;
      if (entry.status == "COMPLETED") {
        std::cout << "Checkpoint " << *checkpoint << " for job " << id->to_string()
                  << " completed." << std::endl;
        if (!entry.external_path.empty())
          std::cout << "Path: file:" << entry.external_path << std::endl;
        return exit_ok;
      }
      return fail("Checkpoint " + std::to_string(*checkpoint) + " of job " + id->to_string()
                  + " failed: " + entry.failure_message);
    }
    if (graph::is_terminal(report->status))
      return fail("Job " + id->to_string() + " ended (" + std::string(graph::to_string(report->status))
                  + ") before checkpoint " + std::to_string(*checkpoint) + " completed");
    if (clock_type::now() + pause > deadline)
      return fail("Checkpoint " + std::to_string(*checkpoint) + " of job " + id->to_string()
                  + " did not complete within " + describe(limit));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(500));
  }
}

} // namespace flint::cli
