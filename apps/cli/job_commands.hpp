#pragma once
/// The job verbs of `flint`: run (on a cluster or an embedded MiniCluster), info, list, status,
/// cancel. Each returns the process's exit code (exit_codes.hpp) and prints Flink's lines.

#include <optional>
#include <string>
#include <vector>

#include "apps/cli/cli_settings.hpp"
#include "apps/cli/job_list_format.hpp"

#include "runtime/graph/job_graph.hpp"

namespace flint::cli {

struct run_options {
  std::string library;
  std::vector<std::string> args;
  std::optional<int> parallelism; ///< -p
  bool detached = false; ///< -d
  std::string from_savepoint; ///< -s
  bool allow_non_restored_state = false; ///< -n
  /// -claimMode (Flink 1.20; -restoreMode before): who owns the snapshot of -s.
  graph::recovery_claim_mode claim_mode = graph::recovery_claim_mode::no_claim;
  /// -c: the library's named entry (FLINT_JOB_NAMED_ENTRY); empty: its FLINT_JOB_ENTRY.
  std::string entry;
};

/// `flint run`: build the JobGraph from the library, upload library and job package to the
/// cluster's blob server, submit to the Dispatcher, and (unless detached) wait for the result.
int run_on_cluster(const cli_settings& settings, const run_options& opts);
/// `flint run --local`: the same program on an embedded MiniCluster in this process.
int run_local(const cli_settings& settings, const run_options& opts);
/// `flint info`: the JSON execution plan; nothing is submitted.
int print_info(const cli_settings& settings, const run_options& opts);
/// `flint list`.
int list_jobs(const cli_settings& settings, list_selection selection);
/// `flint status <job id>`.
int job_status(const cli_settings& settings, const std::string& job_id);
/// `flint cancel <job id>`.
int cancel_job(const cli_settings& settings, const std::string& job_id);
/// `flint savepoint <job id> [target dir]`, and `flint stop [--savepointPath dir] <job id>`
/// (`stop`: the job then finishes).
int savepoint_job(const cli_settings& settings, const std::string& job_id,
                  const std::string& target_dir, bool stop, bool drain = false);
/// `flint savepoint -d PATH`: deletes a savepoint (or retained checkpoint) directory, and only one
/// whose `_metadata` reads as Flint's; anything else is refused, naming why. Runs on this machine:
/// PATH is a shared path (the savepoint directories every node sees).
int dispose_savepoint(const std::string& path);
/// `flint checkpoint <job id> [-full]`: triggers a checkpoint and waits until it completed or
/// failed. `full`: Flink's CheckpointType.FULL, which Flint cannot ask for (a checkpoint of the
/// job's configured kind is taken; the CLI says so).
int checkpoint_job(const cli_settings& settings, const std::string& job_id, bool full);

} // namespace flint::cli
