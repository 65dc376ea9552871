#pragma once
/// `flint`'s exit codes, as Flink's CLI (CliFrontend) returns them: 0 or 1.

namespace flint::cli {

inline constexpr int exit_ok = 0;
/// Anything that went wrong: the cluster is unreachable, the job failed or was cancelled, the
/// library does not load, an unknown job id.
inline constexpr int exit_failure = 1;
/// The command line itself is wrong (unknown action or option, missing argument, bad value):
/// 1, as Flink's CLI exits on a CliArgsException; the message says what is wrong.
inline constexpr int exit_usage = 1;

} // namespace flint::cli
