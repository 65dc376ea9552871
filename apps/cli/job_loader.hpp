#pragma once
/// A job library turned into its graphs on the client (`flint run`, `run --local`, `info`):
/// load the shared object, run its entry point on an environment configured like the cluster's,
/// and keep what the library's code built alive as long as the library itself.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/stream_execution_environment.hpp"
#include "apps/cli/cli_settings.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"

namespace flint::cli {

struct loaded_job {
  /// Keeps the library mapped: the graphs hold its operator factories.
  std::shared_ptr<const void> library;
  std::shared_ptr<const graph::stream_graph> stream;
  std::shared_ptr<const graph::job_graph> job;
  api::configuration config;
};

/// The environment settings a job is built with (config::job_configuration of the client's
/// configuration, `-p` over `parallelism.default`).
expected<api::configuration> job_configuration(const cli_settings& settings,
                                               std::optional<int> parallelism);

/// A fresh random JobID.
graph::job_id new_job_id();

/// Loads `library_path` and builds its program with `args` by its entry `entry` (empty: the
/// library's FLINT_JOB_ENTRY). Errors are ready to print.
expected<loaded_job> load_job(const std::string& library_path, const std::vector<std::string>& args,
                              const api::configuration& config, const graph::job_id& id,
                              const std::string& entry = {});

/// Whether this build can load job libraries.
bool job_libraries_supported();

} // namespace flint::cli
