#pragma once
/// Output paths prepared once per submission, before any task runs (Flink's InitializeOnMaster:
/// FileOutputFormat#initializeGlobal). Called by whoever submits a program it built — the
/// MiniCluster, `flint run`, REST's jar run — never on a restart or a JobManager's recovery, when
/// the paths hold what the job itself wrote.

#include "runtime/common/expected.hpp"
#include "runtime/streaming/stream_operator_factory.hpp"
#include "runtime/streaming/write_mode.hpp"

#include <filesystem>
#include <string>
#include <system_error>

namespace flint::graph {
struct stream_graph;
}

namespace flint::streaming {

/// Runs every operator factory's `initialize_global`; the first refusal refuses the job, with
/// the operator's name in the message.
expected<unit> initialize_outputs(const graph::stream_graph& stream);

/// `write_as_text`'s path before the job: absent, it is left to the tasks. Present, without
/// checkpoints it refuses the job (Flink's NO_OVERWRITE) or, in `overwrite` mode, is removed;
/// with checkpoints a directory is kept as it is (the FileSink adds its part files beside what
/// it holds, and never removes what it did not write) and anything else refuses the job unless
/// `overwrite` replaces it.
inline expected<unit> initialize_text_output(const std::string& path, write_mode mode,
                                             const global_initialization_context& context) {
  namespace fs = std::filesystem;
  if (path.empty())
    return make_error(errc::invalid_argument, "the output path is empty");
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return make_error(errc::internal, "Cannot check output path " + path + ": " + ec.message());
  if (!fs::exists(status))
    return unit{};
  if (context.checkpointing && fs::is_directory(fs::status(path, ec)))
    return unit{};
  if (mode == write_mode::no_overwrite)
    return make_error(errc::rejected,
                      "Cannot write to " + path + ": " + std::string(no_overwrite_message));
  // OVERWRITE: the user asked for the path to be replaced.
  fs::remove_all(path, ec);
  if (ec)
    return make_error(errc::internal, "Cannot overwrite " + path + ": " + ec.message());
  return unit{};
}

} // namespace flint::streaming
