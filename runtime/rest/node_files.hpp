#pragma once
/// A node's own files and process as Flink's JobManager handlers serve them: its log directory
/// listed, a log file by its plain name (never a path), its threads, its environment. Plain
/// functions over the file system and /proc; no HTTP here.

#include <filesystem>
#include <optional>
#include <string>

namespace flint::rest {

/// `name` is a file's own name: not empty, no '/' or '\', not "." or "..", no "..", no control
/// character. What a log file request may name.
bool is_plain_file_name(const std::string& name);

/// The regular file `name` directly in `dir` (a symbolic link is not followed out of it);
/// nullopt when there is none or `name` is not a plain file name.
std::optional<std::filesystem::path> file_in(const std::filesystem::path& dir,
                                             const std::string& name);

/// Flink's LogListInfo: `{"logs": [{"name", "size", "mtime"}]}`, the regular files of `dir` by
/// name (none when it cannot be read).
std::string log_list_json(const std::filesystem::path& dir);

/// Flink's ThreadDumpInfo of this process: `{"threadInfos": [{"threadName",
/// "stringifiedThreadInfo"}]}`, one per thread the kernel lists (/proc/self/task).
std::string thread_dump_json();

/// Flink's EnvironmentInfo: `{"jvm": {"version", "arch", "options"}, "classpath": []}`, the
/// runtime's version and the machine's architecture where Flink names its JVM's.
std::string environment_json();

} // namespace flint::rest
