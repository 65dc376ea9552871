#pragma once
/// A node's files and process in the shapes of Flink's REST answers (LogListInfo,
/// ThreadDumpInfo, EnvironmentInfo). What the files and threads are is node_files' (shared with
/// the TaskExecutor, which sends them over its gateway); no HTTP here.

#include <string>
#include <vector>

#include "runtime/common/node_files.hpp"

namespace flint::rest {

/// Flink's LogListInfo: `{"logs": [{"name", "size", "mtime"}]}`.
std::string log_list_json(const std::vector<node_files::log_file_info>& logs);

/// Flink's ThreadDumpInfo: `{"threadInfos": [{"threadName", "stringifiedThreadInfo"}]}`.
std::string thread_dump_json(const std::vector<node_files::thread_info>& threads);

/// Flink's EnvironmentInfo: `{"jvm": {"version", "arch", "options"}, "classpath": []}`, the
/// runtime's version and the machine's architecture where Flink names its JVM's.
std::string environment_json();

} // namespace flint::rest
