#pragma once
/// The process's log configuration and its named loggers (STYLE.md rule 7): `main()` calls
/// `configure_logging` once with where lines go and from which level; every component then logs
/// through a logger of its own name from `make_endpoint_logger`, on those sinks. Nothing logs
/// through spdlog's default logger, and nothing here sets it.

#include <memory>
#include <string>
#include <vector>

#include <spdlog/common.h>
#include <spdlog/logger.h>

namespace flint {

/// Sets the sinks and the level of the loggers `make_endpoint_logger` makes from now on (those
/// made before keep theirs). Formats are the sinks' own: set a pattern or formatter on a sink
/// before passing it. Before the first call, lines go to stderr from level info. spdlog's default
/// logger is left as it is: lines logged through it (`spdlog::info`) do not reach these sinks or
/// follow this level.
void configure_logging(std::vector<spdlog::sink_ptr> sinks, spdlog::level::level_enum level);

/// Changes only the level, of the loggers `make_endpoint_logger` makes from now on.
void set_logging_level(spdlog::level::level_enum level);

/// A logger named `name` (an endpoint id, or a component: "jobmanager", "job_library") on the
/// configured sinks, at the configured level.
std::shared_ptr<spdlog::logger> make_endpoint_logger(const std::string& name);

} // namespace flint
