/// `flint`: the command-line client of a Flint cluster (Flink's `flink` CLI, CliFrontend).
///
///   flint run [OPTIONS] <job-library> [job args]     submit a job (-d: do not wait for it)
///   flint run --local <job-library> [job args]       run it on an embedded MiniCluster
///   flint info [OPTIONS] <job-library> [job args]    print the JSON execution plan
///   flint list [-r|-s|-a]                            running / scheduled / all jobs
///   flint status <job-id>                            a job's status
///   flint cancel <job-id>                            cancel a job
///   flint savepoint <job-id> [target-dir]            take a savepoint
///   flint savepoint -d <savepoint-path>              dispose of a savepoint
///   flint stop [--savepointPath dir] [-d] <job-id>   a final savepoint, then FINISHED
///   flint checkpoint [-full] <job-id>                trigger a checkpoint
///   flint trace [--endpoint E] [--method M] [--job J] [--export chrome|mermaid FILE]
///                                                    tail a node's message trace
///
/// Exit codes (Flink's): 0 done, 1 failed (cluster unreachable, job failed, bad library, unknown
/// job) or a wrong command line.

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "api/job_entry.hpp"
#include "apps/cli/cli_output.hpp"
#include "apps/cli/cli_settings.hpp"
#include "apps/cli/command_line.hpp"
#include "apps/cli/exit_codes.hpp"
#include "apps/cli/job_commands.hpp"
#include "apps/cli/trace_command.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/config/configuration.hpp"

using namespace flint;
using namespace flint::cli;

namespace {

constexpr const char* actions_text =
  R"(Valid actions are "run", "info", "list", "status", "cancel", "savepoint", "stop", "checkpoint" and "trace".)";

const char* usage_text = R"(./flint <ACTION> [OPTIONS] [ARGUMENTS]

The following actions are available:

Action "run" compiles and runs a program.
  Syntax: run [OPTIONS] <job-library> <arguments>
    -p,--parallelism N      parallelism of the job (default: parallelism.default)
    -d,--detached           submit and return; do not wait for the job's result
    --local                 run on an embedded MiniCluster in this process (no cluster needed)
    -t,--target TARGET      local (as --local) or remote (the cluster at -m; the default)
    -c,--class ENTRY        the library's entry to run: a FLINT_JOB_NAMED_ENTRY's name
                            (default: its FLINT_JOB_ENTRY, flint_job_main)
    -s,--fromSavepoint PATH start from a savepoint or retained checkpoint (_metadata or its dir)
    -n,--allowNonRestoredState
                            skip savepoint state of operators the program no longer has
    -cm,--claimMode MODE    NO_CLAIM (default): the snapshot of -s stays yours, the job never
                            changes or deletes it; CLAIM: the job owns it and deletes it once
                            subsumed (-rm,--restoreMode is the older spelling)

Action "info" shows the optimized execution plan of the program (JSON).
  Syntax: info [OPTIONS] <job-library> <arguments>

Action "list" lists running and scheduled programs.
  Syntax: list [-r|--running] [-s|--scheduled] [-a|--all]

Action "status" shows the status of a job.
  Syntax: status [OPTIONS] <Job ID>

Action "cancel" cancels a running program.
  Syntax: cancel [OPTIONS] <Job ID>

Action "savepoint" triggers a savepoint of a running job, or disposes of one.
  Syntax: savepoint [OPTIONS] <Job ID> [<target directory>]
    (default target: execution.checkpointing.savepoint-dir)
          savepoint -d,--dispose <savepoint path>
    deletes the savepoint's directory, only when its _metadata is Flint's

Action "stop" stops a running job with a final savepoint; the job then finishes.
  Syntax: stop [OPTIONS] [-p,--savepointPath DIR] [-d,--drain] <Job ID>
    -d,--drain              send MAX_WATERMARK before the savepoint: event-time windows and
                            timers fire first (Flink's --drain)

Action "checkpoint" triggers a checkpoint of a running job and waits for it.
  Syntax: checkpoint [OPTIONS] [-full] <Job ID>
    -full                   accepted; Flint takes a checkpoint of the job's configured kind

Action "trace" tails a node's RPC message trace.
  Syntax: trace [--endpoint E] [--method M] [--job J] [--export chrome|mermaid FILE]
                [--follow|--no-follow] [--duration D] [--json] [--monitoring]
    --monitoring            keep REST's and the metrics collector's own queries (the
                            dashboard's polling), which are left out by default

Options of every action:
  -m,--jobmanager HOST:PORT   the JobManager to talk to: its REST address (as Flink's -m;
                              its RPC port is read from GET /jobmanager/config there), else
                              its RPC address (for trace: any node's)
                              (default: jobmanager.rpc.address:jobmanager.rpc.port)
  --config FILE               configuration file (default: config.yaml, else flink-conf.yaml,
                              in $FLINT_CONF_DIR or $FLINK_CONF_DIR, else in deploy/ of this
                              build's repository)
  -D key=value                set a configuration option
  --timeout DURATION          bound on the command ("30 s", "500 ms"; default rpc.ask.timeout
                              for single requests, none for waiting on a job)

Flint's own options come before the job library; everything after it goes to the job.
Exit codes (as Flink's): 0 success, 1 failure or a wrong command line.
)";

std::string check_host_port(const std::string& text) {
  auto hp = config::parse_host_port(text);
  return hp ? std::string() : "expected host:port, got '" + text + "': " + hp.error().message;
}

std::string check_duration(const std::string& text) {
  auto d = config::parse_duration(text);
  if (!d)
    return "expected a duration (\"30 s\", \"500 ms\"), got '" + text + "': " + d.error().message;
  if (d->count() <= 0)
    return "a duration must be positive, got '" + text + "'";
  return {};
}

/// A savepoint path or directory, read as the path keys are (config/file_path.hpp): a file://
/// URI (also the "file:/..." `flint savepoint` prints) becomes its path; another scheme or a
/// relative path is refused here, naming the option, before anything is sent.
std::string shared_path(std::string& text) {
  auto path = config::parse_path(text, config::path_scope::shared);
  if (!path)
    return "'" + text + "': " + path.error().message;
  text = path->string();
  return {};
}

void add_common(CLI::App& app, common_options& opts) {
  app.add_option("--config", opts.config_file, "config.yaml / flink-conf.yaml to read");
  app
    .add_option("-m,--jobmanager", opts.jobmanager,
                "host:port of the JobManager (trace: of any node)")
    ->check(CLI::Validator(check_host_port, "HOST:PORT"));
  app.add_option("--timeout", opts.timeout, "bound on the command (\"30 s\", \"500 ms\")")
    ->check(CLI::Validator(check_duration, "DURATION"));
  app.add_option("-D", opts.dynamic, "configuration option key=value")
    ->expected(1)
    ->allow_extra_args(false)
    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

/// Parses `args` with `app`; an exit code when parsing ends the program (help, usage error).
std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end()); // CLI11 takes them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? exit_ok : exit_usage;
  }
  return std::nullopt;
}

void set_up_logging() {
  // Standard output carries the CLI's answers; runtime log lines go to stderr, warnings and up.
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  configure_logging({std::make_shared<spdlog::sinks::stderr_color_sink_mt>()},
                    spdlog::level::from_str(level ? level : "warn"));
}

int run_action(const std::string& action, const std::vector<std::string>& rest,
               const std::string& exe) {
  CLI::App app{"flint " + action, "flint " + action};
  app.set_help_flag("-h,--help", "print this help");
  common_options common;
  auto settings_or_exit = [&]() -> expected<cli_settings> { return resolve(common, exe); };

  if (action == "run" || action == "info") {
    run_options opts;
    int parallelism = 0;
    bool local = false;
    std::string target;
    std::string entry;
    app.add_option("-p,--parallelism", parallelism, "parallelism of the job")
      ->check(CLI::PositiveNumber);
    if (action == "run") {
      app.add_flag("-d,--detached", opts.detached, "submit and return");
      app.add_flag("--local", local, "run on an embedded MiniCluster");
      app.add_option("-t,--target", target, "local (as --local) or remote (the cluster)")
        ->check(CLI::IsMember({"local", "remote"}));
      app
        .add_option("-s,--fromSavepoint", opts.from_savepoint,
                    "start from this savepoint or retained checkpoint")
        ->transform(CLI::Validator(shared_path, "PATH"));
      app.add_flag("-n,--allowNonRestoredState", opts.allow_non_restored_state,
                   "skip state of operators the program no longer has");
      app
        .add_option_function<std::string>(
          "--claimMode,--restoreMode",
          [&opts](const std::string& text) {
            auto mode = graph::parse_recovery_claim_mode(text);
            if (!mode)
              throw CLI::ValidationError("--claimMode", "'" + text
                                                          + "' is neither NO_CLAIM nor CLAIM");
            opts.claim_mode = *mode;
          },
          "NO_CLAIM (default) or CLAIM: who owns the snapshot of -s")
        ->type_name("MODE");
    }
    app.add_option("-c,--class", entry,
                   "the job library's entry: a FLINT_JOB_NAMED_ENTRY name (default flint_job_main)");
    app.add_option("job-library", opts.library, "the job's shared object (build/jobs/<name>.so)")
      ->required();
    add_common(app, common);
    const std::vector<std::string> value_options{
      "-p",     "--parallelism",   "-m",          "--jobmanager",  "--timeout", "--config", "-D",
      "-s",     "--fromSavepoint", "--claimMode", "--restoreMode", "-cm",       "-rm",
      "-claimMode", "-restoreMode", "-t", "--target", "-c", "--class"};
    auto split = split_at_library(rest, value_options);
    // Flink's single-dash spellings of the claim mode, which CLI11 would read as bundled flags.
    for (auto& arg : split.own) {
      if (arg == "-claimMode" || arg == "-cm")
        arg = "--claimMode";
      else if (arg == "-restoreMode" || arg == "-rm")
        arg = "--restoreMode";
    }
    if (auto code = parse(app, split.own))
      return *code;
    opts.args = std::move(split.job_args);
    if (parallelism > 0)
      opts.parallelism = parallelism;
    if (!entry.empty() && entry != FLINT_JOB_MAIN_SYMBOL && !api::is_job_entry_name(entry)) {
      std::cerr << "flint: -c '" << entry
                << "' is not a job entry name: a name is letters, digits and '_' "
                   "(FLINT_JOB_NAMED_ENTRY(name, fn))"
                << std::endl;
      return exit_usage;
    }
    opts.entry = entry;
    if (target == "local")
      local = true;
    else if (target == "remote" && local) {
      std::cerr << "flint: -t remote and --local exclude each other" << std::endl;
      return exit_usage;
    }
    if (local && opts.detached) {
      std::cerr << "flint: --local runs the job in this process; it cannot be detached (-d)"
                << std::endl;
      return exit_usage;
    }
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    if (action == "info")
      return print_info(*settings, opts);
    return local ? run_local(*settings, opts) : run_on_cluster(*settings, opts);
  }

  if (action == "list") {
    bool r = false;
    bool s = false;
    bool a = false;
    app.add_flag("-r,--running", r, "show only running programs and their JobIDs");
    app.add_flag("-s,--scheduled", s, "show only scheduled programs and their JobIDs");
    app.add_flag("-a,--all", a, "show all programs and their JobIDs");
    add_common(app, common);
    if (auto code = parse(app, rest))
      return *code;
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    return list_jobs(*settings, select_jobs(r, s, a));
  }

  if (action == "status" || action == "cancel") {
    std::string job_id;
    app.add_option("job-id", job_id, "the JobID (as `flint list` prints it)")->required();
    add_common(app, common);
    if (auto code = parse(app, rest))
      return *code;
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    return action == "status" ? job_status(*settings, job_id) : cancel_job(*settings, job_id);
  }

  if (action == "savepoint" || action == "stop") {
    std::string job_id;
    std::string target;
    std::string dispose;
    bool drain = false;
    if (action == "savepoint") {
      app.add_option("-d,--dispose", dispose, "dispose of the savepoint at this path")
        ->transform(CLI::Validator(shared_path, "PATH"));
      app.add_option("job-id", job_id, "the JobID");
      app.add_option("target-directory", target, "where the savepoint goes")
        ->transform(CLI::Validator(shared_path, "DIR"));
    } else {
      app.add_option("-p,--savepointPath", target, "where the savepoint goes")
        ->transform(CLI::Validator(shared_path, "DIR"));
      app.add_flag("-d,--drain", drain,
                   "send MAX_WATERMARK before the savepoint (event time runs to its end)");
      app.add_option("job-id", job_id, "the JobID")->required();
    }
    add_common(app, common);
    if (auto code = parse(app, rest))
      return *code;
    if (action == "savepoint") {
      if (!dispose.empty() && !job_id.empty()) {
        std::cerr << "flint: savepoint -d disposes of a savepoint and takes no JobID" << std::endl;
        return exit_usage;
      }
      if (!dispose.empty())
        return dispose_savepoint(dispose);
      if (job_id.empty()) {
        std::cerr << "flint: savepoint needs a JobID (or -d <savepoint path>)" << std::endl;
        return exit_usage;
      }
    }
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    return savepoint_job(*settings, job_id, target, action == "stop", drain);
  }

  if (action == "checkpoint") {
    std::string job_id;
    bool full = false;
    app.add_flag("--full", full, "a full checkpoint (Flink's -full)");
    app.add_option("job-id", job_id, "the JobID")->required();
    add_common(app, common);
    // Flink's single-dash -full, which CLI11 would read as bundled flags.
    auto args = rest;
    for (auto& arg : args)
      if (arg == "-full")
        arg = "--full";
    if (auto code = parse(app, args))
      return *code;
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    return checkpoint_job(*settings, job_id, full);
  }

  if (action == "trace") {
    trace_options opts;
    std::vector<std::string> export_args;
    bool follow = false;
    bool no_follow = false;
    std::string duration;
    std::string poll;
    app.add_option("--endpoint", opts.filter.endpoint,
                   "keep calls from or to endpoints with this id prefix");
    app.add_option("--method", opts.filter.method, "keep calls of this method (e.g. offer_slots)");
    app.add_option("--job", opts.filter.job,
                   "keep calls from or to this job's endpoints (JobID or its prefix)");
    app
      .add_option("--export", export_args,
                  "write FORMAT (chrome or mermaid) to FILE instead of printing")
      ->expected(2)
      ->type_name("FORMAT FILE");
    app.add_flag("--follow", follow, "keep polling for new records (default when printing)");
    app.add_flag("--no-follow", no_follow,
                 "stop once the records the node has are read (default when exporting)");
    app.add_option("--duration", duration, "stop following after this long")
      ->check(CLI::Validator(check_duration, "DURATION"));
    app.add_option("--poll-interval", poll, "pause between polls (default 200 ms)")
      ->check(CLI::Validator(check_duration, "DURATION"));
    app.add_flag("--json", opts.json, "print records as JSON lines");
    app.add_flag("--monitoring", opts.monitoring,
                 "keep REST's and the metrics collector's own queries (hidden by default)");
    add_common(app, common);
    if (auto code = parse(app, rest))
      return *code;
    if (follow && no_follow) {
      std::cerr << "flint: --follow and --no-follow exclude each other" << std::endl;
      return exit_usage;
    }
    if (follow || no_follow)
      opts.follow = follow;
    if (!export_args.empty()) {
      if (export_args[0] != "chrome" && export_args[0] != "mermaid") {
        std::cerr << "flint: --export FORMAT must be chrome or mermaid, got '" << export_args[0]
                  << "'" << std::endl;
        return exit_usage;
      }
      opts.export_format = export_args[0];
      opts.export_file = export_args[1];
    }
    if (!duration.empty())
      opts.duration = *config::parse_duration(duration);
    if (!poll.empty())
      opts.poll_interval = *config::parse_duration(poll);
    auto settings = settings_or_exit();
    if (!settings)
      return fail(settings.error().message);
    return trace_node(*settings, opts);
  }
  return exit_usage; // not reached: main checks the action
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << usage_text;
    return exit_usage;
  }
  const auto& action = args[0];
  if (action == "-h" || action == "--help" || action == "help") {
    std::cout << usage_text;
    return exit_ok;
  }
  if (action == "-v" || action == "--version") {
    std::cout << "Version: 0.1.0 (Flint, Apache Flink's runtime on CAF)" << std::endl;
    return exit_ok;
  }
  static const std::vector<std::string> actions{"run",       "info", "list",       "status", "cancel",
                                                "savepoint", "stop", "checkpoint", "trace"};
  if (std::find(actions.begin(), actions.end(), action) == actions.end()) {
    std::cerr << "\"" << action << "\" is not a valid action.\n\n"
              << actions_text
              << "\n\nSpecify the help option (-h or --help) to get help on the command."
              << std::endl;
    return exit_usage;
  }
  set_up_logging();
  try {
    return run_action(action, {args.begin() + 1, args.end()}, executable_path(argv[0]));
  } catch (const std::exception& e) {
    // A bug or a broken invariant somewhere below: still a clear line and a failure code.
    return fail(std::string("unexpected error: ") + e.what());
  }
}
