#pragma once
/// `flint`'s exit codes: scripts tell a usage mistake from a failure.

namespace flint::cli {

inline constexpr int exit_ok = 0;
/// Anything that went wrong: the cluster is unreachable, the job failed or was cancelled, the
/// library does not load, an unknown job id.
inline constexpr int exit_failure = 1;
/// The command line itself is wrong (unknown action or option, missing argument, bad value).
inline constexpr int exit_usage = 2;

} // namespace flint::cli
