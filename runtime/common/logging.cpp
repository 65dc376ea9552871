#include "runtime/common/logging.hpp"

#include <mutex>
#include <utility>

#include <spdlog/sinks/stdout_sinks.h>

namespace flint {

namespace {

/// What `configure_logging` set; read by every `make_endpoint_logger`, from any thread.
struct log_configuration {
  std::mutex mtx;
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  spdlog::level::level_enum level = spdlog::level::info;
};

log_configuration& configuration() {
  static log_configuration config;
  return config;
}

} // namespace

void configure_logging(std::vector<spdlog::sink_ptr> sinks, spdlog::level::level_enum level) {
  auto& config = configuration();
  std::lock_guard<std::mutex> guard(config.mtx);
  config.sinks = std::move(sinks);
  config.level = level;
}

void set_logging_level(spdlog::level::level_enum level) {
  auto& config = configuration();
  std::lock_guard<std::mutex> guard(config.mtx);
  config.level = level;
}

std::shared_ptr<spdlog::logger> make_endpoint_logger(const std::string& name) {
  auto& config = configuration();
  std::lock_guard<std::mutex> guard(config.mtx);
  auto logger = std::make_shared<spdlog::logger>(name, config.sinks.begin(), config.sinks.end());
  logger->set_level(config.level);
  return logger;
}

} // namespace flint
