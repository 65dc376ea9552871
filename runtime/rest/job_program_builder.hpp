#pragma once
/// How REST's /jars/:jarid/run and /plan turn an uploaded job library into a job. The node that
/// serves REST hands these in — flint-node gives its JobManager the api layer's
/// (api/rest_job_programs.hpp), as it gives a TaskManager its task factory — so runtime/rest
/// never includes api/ (a ctest, rest_does_not_include_api, keeps it so).

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "runtime/common/expected.hpp"
#include "runtime/config/job_configuration.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"

namespace flint::rest {

/// A job library's program, built in this process (its entry point ran here, as Flink runs a
/// jar's main() in the JobManager).
struct job_program {
  graph::job_graph job;
  /// Prepares the job's outputs before it runs (the operators' initialize_global, Flink's
  /// OutputFormat.initializeGlobal); the first refusal refuses the job.
  std::function<expected<unit>()> initialize_outputs;
  /// Keeps the library (and the program's graphs, which use its code) loaded while held.
  std::shared_ptr<const void> library;
};

struct job_program_builder {
  /// Loads `library` and runs its entry point `entry` (empty: its FLINT_JOB_ENTRY) with `args`
  /// and `settings`: the job, with id `id`. errc::invalid_argument for a library that does not
  /// load or build, or has no such entry.
  std::function<expected<job_program>(const std::filesystem::path& library,
                                      const std::vector<std::string>& args,
                                      const config::job_settings& settings,
                                      const graph::job_id& id, const std::string& entry)>
    build;
  /// Uploads the library and the job's package to `blob_server` and sets `job.code` to them, so
  /// TaskExecutors load exactly that (Flink ships the jar with the JobGraph). Blocking.
  std::function<expected<unit>(caf::actor_system& system, const caf::actor& blob_server,
                               const std::filesystem::path& library,
                               const std::vector<std::string>& args,
                               const config::job_settings& settings, graph::job_graph& job,
                               const std::string& entry)>
    upload;

  explicit operator bool() const { return build && upload; }
};

} // namespace flint::rest
