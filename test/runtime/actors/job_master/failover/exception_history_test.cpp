// The exception history: bounded, newest first, with the job's failure and restart counts.

#include "runtime/actors/job_master/failover/exception_history.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace flint;
using namespace flint::job_master::failover;

namespace {

exception_entry task_failure(std::int64_t timestamp, std::string cause) {
  return exception_entry{timestamp, "Map (1/2)", "localhost:6122-abc (dataPort=6121)",
                         std::move(cause), false};
}

} // namespace

TEST_CASE("the exception history keeps the newest failures first up to its size") {
  exception_history history(3);
  for (int i = 1; i <= 5; ++i)
    history.add(task_failure(1000 + i, "failure " + std::to_string(i)));
  REQUIRE(history.entries().size() == 3);
  CHECK(history.entries()[0].root_cause == "failure 5");
  CHECK(history.entries()[1].root_cause == "failure 4");
  CHECK(history.entries()[2].root_cause == "failure 3");
  CHECK(history.entries()[0].timestamp == 1005);
  CHECK(history.failures() == 5);
}

TEST_CASE("the exception history records global failures without a task") {
  exception_history history;
  history.add(exception_entry{42, {}, {}, "java.lang.Exception: job failed", true});
  history.add(task_failure(43, "boom"));
  REQUIRE(history.entries().size() == 2);
  CHECK(history.entries()[1]
        == exception_entry{42, "", "", "java.lang.Exception: job failed", true});
  CHECK(history.entries()[0].task_name == "Map (1/2)");
  CHECK_FALSE(history.entries()[0].global);
}

TEST_CASE("the exception history counts restarts") {
  exception_history history;
  CHECK(history.restarts() == 0);
  history.record_restart();
  history.record_restart();
  CHECK(history.restarts() == 2);
}

TEST_CASE("an exception history of size zero keeps no entries but counts failures") {
  exception_history history(0);
  history.add(task_failure(1, "boom"));
  CHECK(history.entries().empty());
  CHECK(history.failures() == 1);
}

TEST_CASE("the exception history size is read from web.exception-history-size") {
  config::configuration c;
  auto size = exception_history_size(c);
  REQUIRE(size.has_value());
  CHECK(*size == 16);
  c.set("web.exception-history-size", "4");
  CHECK(*exception_history_size(c) == 4);
  c.set("web.exception-history-size", "-1");
  auto bad = exception_history_size(c);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code == errc::invalid_argument);
  CHECK(bad.error().message.find("'web.exception-history-size'") != std::string::npos);
  CHECK(bad.error().message.find("'-1'") != std::string::npos);
}
