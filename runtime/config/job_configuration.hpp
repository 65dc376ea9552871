#pragma once
/// The settings a job is built with from a cluster's or client's configuration (what `flint run`
/// and REST's /jars/:id/run both pass to a job library's entry point): `parallelism.default`
/// (or the given parallelism), `execution.buffer-timeout` in milliseconds as the API reads it,
/// the pipeline options set, and the job's own recovery and checkpoint keys (`restart-strategy.*`,
/// `execution.checkpointing.*`, `state.*`), which the JobMaster reads over the cluster's.

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::config {

/// The API's configuration type (api::configuration).
using job_settings = std::map<std::string, std::string, std::less<>>;

expected<job_settings> job_configuration(const configuration& cfg, std::optional<int> parallelism);

} // namespace flint::config
