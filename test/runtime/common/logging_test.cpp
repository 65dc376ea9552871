// The process's log configuration: named loggers on the sinks main() configured, never on spdlog's
// default logger.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "runtime/common/logging.hpp"

using namespace flint;

namespace {

/// Lines written to a string as "<logger name>|<level>|<text>".
struct captured_sink {
  std::ostringstream out;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink =
    std::make_shared<spdlog::sinks::ostream_sink_mt>(out, true);

  captured_sink() { sink->set_pattern("%n|%l|%v"); }
  // The configuration must not keep a sink of a dead stream.
  ~captured_sink() {
    configure_logging({std::make_shared<spdlog::sinks::stderr_sink_mt>()}, spdlog::level::info);
  }
};

/// Puts spdlog's default logger back as it was, for the cases that replace it.
struct default_logger_guard {
  std::shared_ptr<spdlog::logger> saved = spdlog::default_logger();
  ~default_logger_guard() { spdlog::set_default_logger(saved); }
};

} // namespace

// First in the file: a run of the whole binary reaches it before any case configured logging.
TEST_CASE("before configure_logging a logger writes to stderr from level info") {
  auto log = make_endpoint_logger("taskmanager");
  CHECK(log->name() == "taskmanager");
  CHECK(log->level() == spdlog::level::info);
  REQUIRE(log->sinks().size() == 1);
  CHECK(std::dynamic_pointer_cast<spdlog::sinks::stderr_sink_mt>(log->sinks()[0]) != nullptr);
}

TEST_CASE("a logger writes to the configured sinks under its own name, from the configured level") {
  captured_sink captured;
  configure_logging({captured.sink}, spdlog::level::info);
  auto log = make_endpoint_logger("jobmanager");
  log->info("Starting StandaloneSessionClusterEntrypoint (Flint).");
  log->debug("not at info");
  make_endpoint_logger("job_library")->warn("Loaded {} of {}.", 1, 2);
  CHECK(captured.out.str()
        == "jobmanager|info|Starting StandaloneSessionClusterEntrypoint (Flint).\n"
           "job_library|warning|Loaded 1 of 2.\n");
}

TEST_CASE("make_endpoint_logger does not use spdlog's default logger, its sinks or its level") {
  captured_sink configured;
  captured_sink other;
  default_logger_guard guard;
  configure_logging({configured.sink}, spdlog::level::debug);
  auto stray = std::make_shared<spdlog::logger>("stray", other.sink);
  stray->set_level(spdlog::level::off);
  spdlog::set_default_logger(stray);
  auto log = make_endpoint_logger("cli");
  CHECK(log != spdlog::default_logger());
  CHECK(log->level() == spdlog::level::debug);
  REQUIRE(log->sinks().size() == 1);
  CHECK(log->sinks()[0] == configured.sink);
  log->debug("connecting");
  CHECK(configured.out.str() == "cli|debug|connecting\n");
  CHECK(other.out.str().empty());
}

TEST_CASE("configure_logging and set_logging_level leave spdlog's default logger as it is") {
  captured_sink configured;
  captured_sink library;
  default_logger_guard guard;
  auto library_logger = std::make_shared<spdlog::logger>("library", library.sink);
  library_logger->set_level(spdlog::level::warn);
  spdlog::set_default_logger(library_logger);
  configure_logging({configured.sink}, spdlog::level::debug);
  set_logging_level(spdlog::level::trace);
  CHECK(spdlog::default_logger() == library_logger);
  CHECK(library_logger->level() == spdlog::level::warn);
  REQUIRE(library_logger->sinks().size() == 1);
  CHECK(library_logger->sinks()[0] == library.sink);
  spdlog::info("not at warn");
  spdlog::warn("from a library");
  CHECK(library.out.str() == "library|warning|from a library\n");
  CHECK(configured.out.str().empty());
}

TEST_CASE(
  "loggers keep what they were made with, set_logging_level changes the level of later ones") {
  captured_sink first;
  captured_sink second;
  configure_logging({first.sink}, spdlog::level::warn);
  auto before = make_endpoint_logger("before");
  configure_logging({second.sink}, spdlog::level::warn);
  set_logging_level(spdlog::level::debug);
  auto after = make_endpoint_logger("after");
  before->info("hidden: made at warn");
  before->warn("to the first sink");
  after->debug("to the second sink");
  CHECK(first.out.str() == "before|warning|to the first sink\n");
  CHECK(second.out.str() == "after|debug|to the second sink\n");
}
