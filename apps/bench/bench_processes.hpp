#pragma once
/// What the benchmarks that spawn real processes share (`flint-bench failover`, `flint-bench ha`):
/// starting and stopping child processes, flint-node's ready line, reading the nodes' log files
/// with their timestamps, the tasks' attempts in those logs, and JSON and statistics helpers.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

namespace flint::bench {

// ---- numbers and JSON ------------------------------------------------------------------------

/// Milliseconds since the epoch, the clock of the nodes' log timestamps.
double wall_ms();

/// `s` for a JSON string: '"' and '\' escaped, control characters as spaces.
std::string json_escape(const std::string& s);

/// A whole number from a command-line argument; false (and `out` unchanged) unless all of it is one.
bool parse_long(const char* text, long& out);

struct stats {
  double median = 0, min = 0, max = 0;
};

/// Median, min and max of `v` (all zero when empty).
stats summarize(std::vector<double> v);

// ---- processes -------------------------------------------------------------------------------

/// Starts `argv` (argv[0] a path) with stdin from /dev/null and stdout/stderr into files; it dies
/// with this process (PR_SET_PDEATHSIG).
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& out,
            const std::filesystem::path& err);

/// The exit status once the child `pid` ended within `timeout` (128 + signal if killed); nothing
/// if it still runs.
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds timeout);

/// Runs `argv` like spawn() and waits for its exit status; after `timeout` it is killed (SIGKILL),
/// reaped, and nothing is returned.
std::optional<int> run_to_exit(const std::vector<std::string>& argv,
                               const std::filesystem::path& out, const std::filesystem::path& err,
                               std::chrono::milliseconds timeout);

/// SIGCONT and SIGTERM to each child in `pids`, then SIGKILL to whichever has not exited within
/// `grace`; reaps them all and clears `pids`.
void stop_children(std::vector<pid_t>& pids, std::chrono::milliseconds grace);

/// The whole file; empty if it cannot be read.
std::string read_file(const std::filesystem::path& p);

/// The "flint-node ready ..." line the child `pid` writes to `out`, once it is there in full;
/// nothing if the child exits first (it is left to be reaped, e.g. by stop_children) or `timeout`
/// passes.
std::optional<std::string> await_ready(pid_t pid, const std::filesystem::path& out,
                                       std::chrono::milliseconds timeout);

/// A field of a ready line: ready_field(line, "rpc_port").
std::string ready_field(const std::string& ready, const std::string& key);

/// The directory of this executable (build/bin).
std::filesystem::path binary_dir();

/// `deploy/<name>` of the source tree: under $FLINT_SOURCE if set, else in a parent of this
/// binary's directory, else in CMAKE_HOME_DIRECTORY of the build's CMakeCache.txt.
std::optional<std::filesystem::path> find_deploy_script(const std::string& name);

/// A fresh directory $TMPDIR/flint-bench-<name>.XXXXXX; nothing (and a message on stderr) if it
/// cannot be made.
std::optional<std::filesystem::path> make_temp_dir(const std::string& name);

// ---- logs ------------------------------------------------------------------------------------

struct log_line {
  double ms = 0; ///< since the epoch
  std::string text;
};

/// The lines of a flint-node log ("2026-11-29 12:00:00,123 INFO  name - message"), with times.
std::vector<log_line> read_log(const std::filesystem::path& p);

/// The time of the first line at or after `after_ms` that contains `text`.
std::optional<double> first_line(const std::vector<log_line>& lines, const std::string& text,
                                 double after_ms = 0);

/// `<execution graph>_<vertex>_<subtask>_<attempt>` -> attempt.
int attempt_number(const std::string& attempt_id);

/// The attempt id in "<name> (<attempt id>) switched from ..." ending at `at` (the ')').
std::string attempt_before(const std::string& text, std::size_t at);

/// Attempt id -> when a TaskManager first logged it RUNNING at or after `after_ms`, over all the
/// TaskManager logs.
std::map<std::string, double> running_tasks(const std::vector<std::filesystem::path>& tm_logs,
                                            double after_ms = 0);

/// What a JobManager deployed: attempt number -> attempt ids, and when the last one went out.
struct deployments {
  std::map<int, std::set<std::string>> ids;
  std::map<int, double> last_ms;
};

/// The "Deploying ... (attempt #n) with attempt id X" lines of a JobManager log at or after
/// `after_ms`.
deployments deployed(const std::vector<log_line>& jm, double after_ms = 0);

} // namespace flint::bench
