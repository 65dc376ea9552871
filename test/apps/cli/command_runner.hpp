#pragma once
/// Runs a command to its end for the CLI tests: captures stdout and stderr, the exit code, and
/// kills the command if it outlives `timeout` (a hang fails the test instead of stalling it).

#include <chrono>
#include <string>
#include <vector>

namespace flint::test {

struct command_result {
  int exit_code = -1; ///< 128 + signal when killed
  std::string out;
  std::string err;
  bool timed_out = false;
  std::chrono::milliseconds elapsed{0};
};

command_result run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                           const std::vector<std::string>& extra_env = {});

/// stdout and stderr together, for failure messages.
std::string describe(const command_result& r);

} // namespace flint::test
