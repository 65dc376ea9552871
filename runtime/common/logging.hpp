#pragma once
/// One named spdlog logger per endpoint (STYLE.md rule 7), sharing the sinks and level of the
/// default logger that `main()` configured.

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace flint {

/// A logger named `name` (an endpoint id) on the default logger's sinks, at its level.
std::shared_ptr<spdlog::logger> make_endpoint_logger(const std::string& name);

} // namespace flint
