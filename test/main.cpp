// The doctest main of the actor and network suites. Endpoints log Flink's lines through spdlog;
// tests keep only warnings and errors unless FLINT_LOG_LEVEL says otherwise (e.g. "info"). A run
// that skipped a test case (test/support/skip.hpp) and failed none exits with 77.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>

#include <spdlog/sinks/stdout_sinks.h>

#include "runtime/common/logging.hpp"
#include "test/support/skip.hpp"

int main(int argc, char** argv) {
  const char* level = std::getenv("FLINT_LOG_LEVEL");
  flint::configure_logging({std::make_shared<spdlog::sinks::stderr_sink_mt>()},
                           spdlog::level::from_str(level != nullptr ? level : "warn"));
  doctest::Context context(argc, argv);
  int status = context.run();
  if (status == 0 && flint::test::skipped_test_cases() > 0)
    return flint::test::skip_return_code;
  return status;
}
