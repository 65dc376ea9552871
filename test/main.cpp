// The doctest main of the actor and network suites. Endpoints log Flink's lines through spdlog;
// tests keep only warnings and errors unless FLINT_LOG_LEVEL says otherwise (e.g. "info").
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>

#include <spdlog/sinks/stdout_sinks.h>

#include "runtime/common/logging.hpp"

int main(int argc, char** argv) {
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  flint::configure_logging({std::make_shared<spdlog::sinks::stderr_sink_mt>()},
                           spdlog::level::from_str(level != nullptr ? level : "warn"));
  doctest::Context context(argc, argv);
  return context.run();
}
