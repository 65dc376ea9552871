// Selecting trace records by endpoint, method, job and direction.

#include <doctest/doctest.h>

#include "apps/trace_tools/trace_filter.hpp"
#include "apps/trace_tools/trace_reader.hpp"
#include "test/apps/trace_tools/trace_builder.hpp"

using namespace flint;
using namespace flint::trace_test;
using trace::direction;
using trace::outcome;

TEST_CASE("filters select by endpoint prefix, method, job and direction") {
  auto records = slot_protocol_trace().records;
  auto count = [&](const trace::record_filter& f) { return trace::filter(records, f).size(); };
  trace::record_filter f;
  CHECK(count(f) == records.size());
  f.endpoint = "task_executor/";
  CHECK(count(f) == 4 * 6 + 2);
  f.endpoint = "slot_pool/";
  CHECK(count(f) == 4);
  f = {};
  f.method = "request_slot";
  CHECK(count(f) == 8);
  f.dir = direction::receive;
  CHECK(count(f) == 2);
  f = {};
  f.job = "4f1d2c3b";
  CHECK(count(f) == 4 * 5);
  f.job = "4f1d"; // abbreviated ids work
  CHECK(count(f) == 4 * 5);
  f.job = "tm-1"; // a TaskManager id is not a job
  CHECK(count(f) == 0);
  f = {};
  f.endpoint = "resource_manager";
  f.dir = direction::receive;
  auto received = trace::filter(records, f);
  for (const auto& r : received)
    CHECK(r.dir == direction::receive);
  CHECK(received.size() == 5 + 1);
  CHECK(trace::parse_direction("reply").value() == direction::reply);
  CHECK_FALSE(trace::parse_direction("up"));
}
