#pragma once
/// A node's own log files and threads, as Flink's JobManager and TaskManager handlers serve
/// them: the files directly in its log directory (by their plain name, never a path), a piece of
/// one, the process's threads. Plain functions over the file system and /proc; the JobManager's
/// REST handlers call them in place, a TaskExecutor answers its gateway's requests with them.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"

namespace flint::node_files {

/// `name` is a file's own name: not empty, no '/' or '\', not "." or "..", no "..", no control
/// character. What a log file request may name.
bool is_plain_file_name(const std::string& name);

/// The regular file `name` directly in `dir` (a symbolic link is not followed out of it);
/// nullopt when there is none or `name` is not a plain file name.
std::optional<std::filesystem::path> file_in(const std::filesystem::path& dir,
                                             const std::string& name);

/// Where a node started by flint-daemon.sh writes its standard output: the log file's `.out`
/// sibling (Flink's taskmanager.out beside taskmanager.log). Empty for an empty log file.
std::filesystem::path stdout_file_of(const std::filesystem::path& log_file);

/// One entry of Flink's LogListInfo.
struct log_file_info {
  std::string name;
  std::int64_t size = 0;
  /// Last modification, ms since the epoch.
  std::int64_t mtime = 0;
};

/// The regular files directly in `dir` by name (links are not: nothing outside is listed); none
/// when it cannot be read.
std::vector<log_file_info> list_log_files(const std::filesystem::path& dir);

/// One thread of Flink's ThreadDumpInfo.
struct thread_info {
  std::string thread_name;
  std::string stringified_thread_info;
};

/// This process's threads as the kernel lists them (/proc/self/task), by thread id.
std::vector<thread_info> thread_dump();

/// A piece of a file: at most `max_bytes` from `offset`, and the file's size when read.
struct file_chunk {
  std::int64_t size = 0;
  std::vector<char> data;
};

/// Reads `file` from `offset` (errc::not_found when it cannot be opened, invalid_argument for a
/// negative offset or limit). An offset at or past the end reads nothing.
expected<file_chunk> read_file_chunk(const std::filesystem::path& file, std::int64_t offset,
                                     std::int64_t max_bytes);

} // namespace flint::node_files
