// The "trace" endpoint a live tail polls, driven message by message on the deterministic scheduler.

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <caf/all.hpp>

#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/actors/trace_server/trace_server.hpp"
#include "runtime/actors/trace_server/trace_server_gateway.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

trace::record make(const std::string& method) {
  trace::record r;
  r.dir = trace::direction::receive;
  r.from = "task_executor/tm-1";
  r.to = "resource_manager";
  r.method = method;
  r.token = {7, 9};
  r.trace = {11, 12, 13};
  r.is_ask = true;
  r.bytes = 48;
  return r;
}

/// A node recorder separate from the fixture's, so the test's own calls never show in it.
struct trace_fixture : test_fixture {
  std::int64_t now = 1'000'000;
  trace::trace_recorder node{[this] { return now++; }, 4};
  caf::actor server;
  caf::actor client = spawn<fake_endpoint>(context("flint-cli"));

  trace_fixture() {
    auto ctx = context(trace::trace_endpoint_name);
    ctx.recorder = &node; // the server must not record its own calls even when given the recorder
    server = spawn<trace::trace_server>(ctx, node);
    run();
  }

  void record(int from, int to) {
    for (int i = from; i < to; ++i)
      node.record_event(make("m" + std::to_string(i)));
  }

  trace::fetch_trace_response fetch(std::uint64_t from, std::uint32_t max = 0) {
    std::optional<expected<trace::fetch_trace_response>> result;
    rpc::gateway gw(server, trace::trace_endpoint_name);
    in_main_thread<fake_endpoint>(client, [&](fake_endpoint& self) {
      gw.ask<trace::fetch_trace>(
        self, trace::fetch_trace_request{from, max},
        [&](expected<trace::fetch_trace_response> r) { result.emplace(std::move(r)); });
    });
    run();
    REQUIRE(result.has_value());
    REQUIRE_MESSAGE(result->has_value(), result->error().to_string());
    return std::move(**result);
  }

  static std::vector<std::string> methods(const trace::fetch_trace_response& r) {
    std::vector<std::string> out;
    for (auto& rec : r.records)
      out.push_back(rec.method);
    return out;
  }
};

} // namespace

TEST_CASE_FIXTURE(
  trace_fixture,
  "a tail gets the node's records in order and continues where the last answer ended") {
  record(0, 3);
  auto first = fetch(0);
  CHECK(methods(first) == std::vector<std::string>{"m0", "m1", "m2"});
  CHECK(first.missed == 0);
  CHECK(first.next_sequence == 3);
  CHECK(first.recorded == 3);

  auto idle = fetch(first.next_sequence);
  CHECK(idle.records.empty());
  CHECK(idle.next_sequence == 3);

  record(3, 5);
  auto second = fetch(idle.next_sequence);
  CHECK(methods(second) == std::vector<std::string>{"m3", "m4"});
  CHECK(second.records.front().sequence == 3);
  CHECK(second.missed == 0);
  CHECK(second.next_sequence == 5);
}

TEST_CASE_FIXTURE(trace_fixture, "records cross the wire with every field") {
  auto r = make("offer_slots");
  r.dir = trace::direction::response;
  r.result = trace::outcome::rejected;
  r.latency_us = 321;
  r.detail = std::string("fencing token mismatch\0tail", 27);
  r.is_ask = false;
  node.record_event(r);
  auto got = fetch(0);
  REQUIRE(got.records.size() == 1);
  const auto& x = got.records[0];
  CHECK(x.sequence == 0);
  CHECK(x.time_us == 1'000'000);
  CHECK(x.dir == trace::direction::response);
  CHECK(x.from == "task_executor/tm-1");
  CHECK(x.to == "resource_manager");
  CHECK(x.method == "offer_slots");
  CHECK(x.token == rpc::fencing_token{7, 9});
  CHECK(x.trace.trace_id == 11);
  CHECK(x.trace.span_id == 12);
  CHECK(x.trace.parent_span_id == 13);
  CHECK_FALSE(x.is_ask);
  CHECK(x.bytes == 48);
  CHECK(x.result == trace::outcome::rejected);
  CHECK(x.latency_us == 321);
  CHECK(x.detail == r.detail);
  CHECK_FALSE(x.monitoring);
  auto polled = make("request_job_status");
  polled.from = "rest";
  node.record_event(polled);
  auto marked = fetch(1);
  REQUIRE(marked.records.size() == 1);
  CHECK(marked.records[0].monitoring);
}

TEST_CASE_FIXTURE(trace_fixture, "a batch holds at most the records asked for") {
  record(0, 4);
  auto first = fetch(0, 3);
  CHECK(methods(first) == std::vector<std::string>{"m0", "m1", "m2"});
  CHECK(first.next_sequence == 3);
  CHECK(first.recorded == 4);
  auto rest = fetch(first.next_sequence, 3);
  CHECK(methods(rest) == std::vector<std::string>{"m3"});
}

TEST_CASE_FIXTURE(trace_fixture,
                  "records the ring overwrote before the tail fetched them are reported as a gap") {
  record(0, 3);
  auto first = fetch(0);
  REQUIRE(first.next_sequence == 3);
  // The ring holds 4: of m3..m9 only m6..m9 are left.
  record(3, 10);
  auto after_gap = fetch(first.next_sequence);
  CHECK(after_gap.missed == 3);
  CHECK(methods(after_gap) == std::vector<std::string>{"m6", "m7", "m8", "m9"});
  CHECK(after_gap.records.front().sequence == 6);
  CHECK(after_gap.next_sequence == 10);
  // Asking from 0 reports everything before the ring's oldest record as missed.
  CHECK(fetch(0).missed == 6);
}

TEST_CASE_FIXTURE(trace_fixture, "records dropped by clear are passed over as missed") {
  record(0, 2);
  node.clear();
  record(2, 3);
  auto got = fetch(0);
  CHECK(got.missed == 2);
  CHECK(methods(got) == std::vector<std::string>{"m2"});
  CHECK(got.next_sequence == 3);
}

TEST_CASE_FIXTURE(trace_fixture,
                  "the trace server's own calls are not recorded, and need no fencing token") {
  record(0, 1);
  // The gateway carries no token: fetch_trace is unfenced.
  fetch(0);
  fetch(1);
  CHECK(node.recorded() == 1);
}

TEST_CASE("a fetch answer with an unknown direction does not decode") {
  trace::fetch_trace_response resp;
  resp.records.push_back(make("m"));
  resp.records[0].dir = static_cast<trace::direction>(9);
  auto bytes = rpc::codec<trace::fetch_trace_response>::encode(resp);
  auto back = rpc::codec<trace::fetch_trace_response>::decode(bytes);
  REQUIRE_FALSE(back.has_value());
  CHECK(back.error().code == errc::malformed_message);
  CHECK(back.error().message.find("direction") != std::string::npos);
}
