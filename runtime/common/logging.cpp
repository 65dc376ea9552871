#include "runtime/common/logging.hpp"

#include <spdlog/spdlog.h>

namespace flint {

std::shared_ptr<spdlog::logger> make_endpoint_logger(const std::string& name) {
  auto base = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(name, base->sinks().begin(), base->sinks().end());
  logger->set_level(base->level());
  return logger;
}

} // namespace flint
