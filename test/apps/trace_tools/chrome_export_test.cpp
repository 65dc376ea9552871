// The Chrome trace-event export.

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/trace_tools/chrome_export.hpp"
#include "test/apps/trace_tools/trace_builder.hpp"

using namespace flint;
using namespace flint::trace_test;
using trace::direction;
using trace::outcome;

namespace {

/// Whether the complete events on each thread nest (what viewers need), and each flow event
/// follows, on its thread and at its time, the slice it binds to.
void check_threads_nest(const nlohmann::json& events) {
  std::map<std::pair<int, int>, std::vector<std::int64_t>> open_ends;
  std::map<std::pair<int, int>, std::int64_t> last_slice_ts;
  for (const auto& e : events) {
    auto ph = e.at("ph").get<std::string>();
    if (ph == "M")
      continue;
    std::pair<int, int> thread{e.at("pid"), e.at("tid")};
    auto ts = e.at("ts").get<std::int64_t>();
    if (ph == "s" || ph == "f") {
      REQUIRE(last_slice_ts.contains(thread));
      CHECK(last_slice_ts[thread] == ts);
      continue;
    }
    last_slice_ts[thread] = ts;
    auto end = ts + (ph == "X" ? e.at("dur").get<std::int64_t>() : 0);
    auto& stack = open_ends[thread];
    while (!stack.empty() && stack.back() < ts)
      stack.pop_back();
    CHECK((stack.empty() || stack.back() >= end));
    stack.push_back(end);
  }
}

} // namespace

TEST_CASE("the chrome export is trace-event JSON with the slot protocol in order") {
  auto records = slot_protocol_trace().records;
  auto text = trace::export_chrome(records);
  auto doc = nlohmann::json::parse(text); // throws, and fails the test, if not valid JSON
  REQUIRE(doc.contains("traceEvents"));
  const auto& events = doc["traceEvents"];
  REQUIRE(events.is_array());

  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::vector<std::string> caller_asks, callee_asks;
  std::int64_t last_ts = -1;
  std::int64_t first_ts = -1;
  std::map<std::string, int> flow_starts, flow_ends;
  int instants = 0;
  for (const auto& e : events) {
    auto ph = e.at("ph").get<std::string>();
    if (ph == "M") {
      if (e["name"] == "process_name")
        processes[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name")
        threads[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    auto ts = e.at("ts").get<std::int64_t>();
    CHECK(ts >= last_ts); // sorted by time
    if (first_ts < 0)
      first_ts = ts;
    last_ts = ts;
    auto thread = threads.at({e.at("pid"), e.at("tid")}); // every event sits on a named thread
    if (ph == "X") {
      CHECK(e.at("dur").get<std::int64_t>() >= 0);
      const auto& args = e.at("args");
      CHECK(args.at("token") == "11112222-3333-4444-5555-666677778888");
      CHECK(args.contains("span_id"));
      CHECK(args.contains("trace_id"));
      CHECK(args.contains("bytes"));
      CHECK(args.at("outcome") == "ok");
      if (args.at("side") == "caller") {
        caller_asks.push_back(e["name"]);
        CHECK(thread == args.at("from"));
      } else {
        callee_asks.push_back(e["name"]);
        CHECK(thread == args.at("to"));
      }
    } else if (ph == "i") {
      ++instants;
      CHECK(e["name"] == "heartbeat_from_resource_manager");
    } else if (ph == "s") {
      ++flow_starts[e.at("id")];
    } else if (ph == "f") {
      CHECK(e.at("bp") == "e");
      ++flow_ends[e.at("id")];
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  CHECK(first_ts == 0); // relative to the first record
  check_threads_nest(events);
  CHECK(caller_asks == slot_protocol_methods);
  CHECK(callee_asks == slot_protocol_methods);
  CHECK(instants == 2);
  CHECK(flow_starts.size() == slot_protocol_methods.size() + 1);
  CHECK(flow_starts == flow_ends);
  // A process per node, a thread per endpoint.
  CHECK(processes.size() == 2);
  std::set<std::string> process_names;
  for (const auto& [pid, name] : processes)
    process_names.insert(name);
  CHECK(process_names == std::set<std::string>{"JobManager", "TaskManager tm-1"});
  std::set<std::string> thread_names;
  for (const auto& [id, name] : threads)
    thread_names.insert(name);
  CHECK(thread_names == std::set<std::string>{job, pool, rm, te});
}

TEST_CASE("an ask spans send to response on the caller and receive to reply on the callee") {
  trace_builder b;
  b.ask(te, rm, "register_task_executor", outcome::failed, "Unknown \"job\"");
  auto doc = nlohmann::json::parse(trace::export_chrome(b.records));
  std::vector<nlohmann::json> spans;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X")
      spans.push_back(e);
  REQUIRE(spans.size() == 2);
  CHECK(spans[0]["args"]["side"] == "caller");
  CHECK(spans[0]["ts"] == 0);
  CHECK(spans[0]["dur"] == 30);
  CHECK(spans[0]["args"]["outcome"] == "failed");
  CHECK(spans[0]["args"]["detail"] == "Unknown \"job\"");
  CHECK(spans[1]["args"]["side"] == "callee");
  CHECK(spans[1]["ts"] == 10);
  CHECK(spans[1]["dur"] == 10);
}

TEST_CASE("a half of an ask without its other record still gets a span, from its latency") {
  trace_builder b;
  b.ask(te, rm, "send_slot_report");
  // Only what the TaskManager's node saw of the caller side: its response.
  std::vector<trace::record> only_response = {b.records[3]};
  auto doc = nlohmann::json::parse(trace::export_chrome(only_response));
  int spans = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "X") {
      ++spans;
      CHECK(e["dur"] == 30);
    }
  CHECK(spans == 1);
  CHECK(nlohmann::json::parse(trace::export_chrome({}))["traceEvents"].empty());
}

TEST_CASE("asks of one endpoint that overlap without nesting go on separate lanes") {
  std::vector<trace::record> records;
  auto add = [&](direction d, const std::string& to, std::int64_t t, std::uint64_t span) {
    trace::record r;
    r.dir = d;
    r.from = d == direction::reply ? to : job;
    r.to = d == direction::reply ? job : to;
    r.method = "submit_task";
    r.is_ask = true;
    r.time_us = t;
    r.trace = {1, span, 0};
    records.push_back(r);
  };
  // The JobMaster deploys to two TaskManagers; the first answer comes first.
  add(direction::send, "task_executor/tm-1", 100, 1);
  add(direction::send, "task_executor/tm-2", 110, 2);
  add(direction::receive, "task_executor/tm-1", 112, 1);
  add(direction::receive, "task_executor/tm-2", 115, 2);
  add(direction::reply, "task_executor/tm-1", 118, 1);
  add(direction::reply, "task_executor/tm-2", 125, 2);
  add(direction::response, "task_executor/tm-1", 130, 1);
  add(direction::response, "task_executor/tm-2", 140, 2);
  auto doc = nlohmann::json::parse(trace::export_chrome(records));
  const auto& events = doc["traceEvents"];
  check_threads_nest(events);
  std::map<std::pair<int, int>, std::string> threads;
  for (const auto& e : events)
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  std::vector<std::string> caller_lanes;
  for (const auto& e : events)
    if (e["ph"] == "X" && e["args"]["side"] == "caller")
      caller_lanes.push_back(threads.at({e["pid"], e["tid"]}));
  CHECK(caller_lanes == std::vector<std::string>{job, job + " (2)"});
  std::set<std::string> processes;
  for (const auto& e : events)
    if (e["ph"] == "M" && e["name"] == "process_name")
      processes.insert(e["args"]["name"].get<std::string>());
  CHECK(processes == std::set<std::string>{"JobManager", "TaskManager tm-1", "TaskManager tm-2"});
}

TEST_CASE("bytes that are not UTF-8 in a record still give valid JSON, as U+FFFD") {
  trace::record r;
  r.dir = direction::send;
  r.from = job;
  r.to = te;
  r.method = "submit\xfftask";
  r.detail = "caf\xe9";
  r.result = outcome::failed;
  auto doc = nlohmann::json::parse(trace::export_chrome(std::vector<trace::record>{r}));
  std::vector<nlohmann::json> instants;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "i")
      instants.push_back(e);
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["name"] == "submit\xef\xbf\xbdtask");
  CHECK(instants[0]["args"]["detail"] == "caf\xef\xbf\xbd");
}
