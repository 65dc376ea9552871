// Reading trace records back, filtering them, and the Chrome and Mermaid exports.

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/actors/trace/trace_export.hpp"

using namespace flint;
using trace::direction;
using trace::outcome;

namespace {

/// Builds the records one node writes for a cluster in one process (the MiniCluster), with a
/// clock that advances 10 us per record.
class trace_builder {
public:
  std::vector<trace::record> records;

  /// All four records of an ask: send, receive, reply, response.
  void ask(const std::string& from, const std::string& to, const std::string& method,
           outcome result = outcome::ok, const std::string& detail = {}) {
    auto span = ++span_;
    auto sent = push(direction::send, from, to, method, true, span);
    auto received = push(direction::receive, from, to, method, true, span);
    auto& reply = push(direction::reply, to, from, method, true, span);
    reply.result = result;
    reply.detail = detail;
    reply.latency_us = reply.time_us - received.time_us;
    auto& response = push(direction::response, from, to, method, true, span);
    response.result = result;
    response.detail = detail;
    response.latency_us = response.time_us - sent.time_us;
  }

  /// A tell: send and receive.
  void tell(const std::string& from, const std::string& to, const std::string& method,
            outcome received_as = outcome::ok) {
    auto span = ++span_;
    push(direction::send, from, to, method, false, span);
    push(direction::receive, from, to, method, false, span).result = received_as;
  }

private:
  trace::record& push(direction d, const std::string& from, const std::string& to,
                      const std::string& method, bool is_ask, std::uint64_t span) {
    trace::record r;
    r.time_us = now_ += 10;
    r.dir = d;
    r.from = from;
    r.to = to;
    r.method = method;
    r.token = {0x1111222233334444ull, 0x5555666677778888ull};
    r.trace = {7, span, 0};
    r.is_ask = is_ask;
    r.bytes = 40 + static_cast<std::uint32_t>(records.size());
    r.sequence = records.size();
    records.push_back(r);
    return records.back();
  }

  std::int64_t now_ = 1'700'000'000'000'000;
  std::uint64_t span_ = 0x100;
};

const std::string job = "job_master/4f1d2c3b";
const std::string pool = "slot_pool/4f1d2c3b";
const std::string rm = "resource_manager";
const std::string te = "task_executor/tm-1";

/// The slot protocol of §6.1: a TaskExecutor registers and reports its slots, a JobMaster
/// registers, its SlotPool requests a slot, the ResourceManager asks the TaskExecutor for it,
/// which offers it to the JobMaster, which deploys a task into it.
trace_builder slot_protocol_trace() {
  trace_builder b;
  b.ask(te, rm, "register_task_executor");
  b.ask(te, rm, "send_slot_report");
  b.ask(job, rm, "register_job_manager");
  b.ask(pool, rm, "request_slot");
  b.ask(rm, te, "request_slot");
  b.ask(te, job, "register_task_manager");
  b.ask(te, job, "offer_slots");
  b.tell(rm, te, "heartbeat_from_resource_manager");
  b.ask(job, te, "submit_task");
  return b;
}

const std::vector<std::string> slot_protocol_methods = {
  "register_task_executor", "send_slot_report", "register_job_manager", "request_slot",
  "request_slot", "register_task_manager", "offer_slots", "submit_task"};

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

// -- parse_record -------------------------------------------------------------------------------

TEST_CASE("a record survives to_json and parse_record with every field, escapes included") {
  trace::record r;
  r.time_us = 1'732'870'000'123'456;
  r.dir = direction::reply;
  r.from = "task_executor/tm-\"1\"";
  r.to = "job_master/ab\\cd";
  r.method = "offer_slots";
  r.token = {0x0123456789abcdefull, 0xfedcba9876543210ull};
  r.trace = {0xffffffffffffffffull, 0x8000000000000001ull, 0x42};
  r.is_ask = true;
  r.bytes = 4'000'000'000u;
  r.result = outcome::failed;
  r.latency_us = 0;
  r.detail = "line\none\ttab \"q\" \\ \x01 caf\xc3\xa9 \r end";
  r.sequence = 18'000'000'000'000'000'000ull; // above int64's range: written as a negative
  auto line = trace::to_json(r);
  auto back = trace::parse_record(line);
  REQUIRE_MESSAGE(back, (back ? "" : back.error().to_string()));
  CHECK(back->time_us == r.time_us);
  CHECK(back->dir == r.dir);
  CHECK(back->from == r.from);
  CHECK(back->to == r.to);
  CHECK(back->method == r.method);
  CHECK(back->token == r.token);
  CHECK(back->trace.trace_id == r.trace.trace_id);
  CHECK(back->trace.span_id == r.trace.span_id);
  CHECK(back->trace.parent_span_id == r.trace.parent_span_id);
  CHECK(back->is_ask);
  CHECK(back->bytes == r.bytes);
  CHECK(back->result == r.result);
  CHECK(back->latency_us == 0);
  CHECK(back->detail == r.detail);
  CHECK(back->sequence == r.sequence);
  CHECK(trace::to_json(*back) == line);
}

TEST_CASE("absent optional fields parse to their defaults: no latency, no detail, no token") {
  for (auto d : {direction::send, direction::receive, direction::reply, direction::response}) {
    for (auto o : {outcome::ok, outcome::rejected, outcome::malformed, outcome::unknown_method,
                   outcome::failed, outcome::timeout, outcome::unreachable}) {
      trace::record r;
      r.dir = d;
      r.result = o;
      r.from = "a";
      r.to = "b";
      r.method = "m";
      auto back = trace::parse_record(trace::to_json(r));
      REQUIRE(back);
      CHECK(back->dir == d);
      CHECK(back->result == o);
      CHECK(back->latency_us == -1);
      CHECK(back->detail.empty());
      CHECK(back->token.is_nil());
      CHECK_FALSE(back->is_ask);
    }
  }
}

TEST_CASE("field order, whitespace and unknown fields do not matter") {
  auto back = trace::parse_record(
    R"( { "outcome" : "ok", "bytes": 3, "parent_span_id":"0", "span_id":"a",
    "trace_id":"b", "token":"<none>", "kind":"tell", "method":"m", "to":"t", "from":"f",
    "dir":"send", "time_us":5, "seq":9, "added_later":"x" } )");
  REQUIRE_MESSAGE(back, (back ? "" : back.error().to_string()));
  CHECK(back->sequence == 9);
  CHECK(back->trace.span_id == 10);
  CHECK(back->trace.trace_id == 11);
}

TEST_CASE("malformed lines give malformed_message errors that say what is wrong") {
  trace::record r;
  r.from = "a";
  r.to = "b";
  r.method = "m";
  auto good = trace::to_json(r);
  auto replace = [&](const std::string& from, const std::string& to) {
    auto s = good;
    auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  struct bad_case {
    std::string line;
    std::string mentions;
  };
  std::vector<bad_case> cases = {
    {"", "expected '{'"},
    {"not json", "expected '{'"},
    {"[1,2]", "expected '{'"},
    {good.substr(0, good.size() / 2), ""},
    {good + "x", "after the closing"},
    {"{}", "missing field \"seq\""},
    {replace("\"seq\":0", "\"seq\":\"0\""), "\"seq\" must be an integer"},
    {replace("\"time_us\":0", "\"time_us\":1.5"), "\"time_us\" is not an integer"},
    {replace("\"seq\":0", "\"seq\":99999999999999999999"), "does not fit"},
    {replace("\"dir\":\"send\"", "\"dir\":\"sideways\""), "unknown direction \"sideways\""},
    {replace("\"kind\":\"tell\"", "\"kind\":\"shout\""), "\"kind\""},
    {replace("\"token\":\"<none>\"", "\"token\":\"nope\""), "\"token\""},
    {replace("\"span_id\":\"0000000000000000\"", "\"span_id\":\"xyz\""), "\"span_id\""},
    {replace("\"outcome\":\"ok\"", "\"outcome\":\"meh\""), "unknown outcome"},
    {replace("\"bytes\":0", "\"bytes\":-1"), "\"bytes\" is out of range"},
    {replace("\"method\":\"m\"", "\"method\":\"m\",\"method\":\"n\""), "appears twice"},
    {replace("\"method\":\"m\"", "\"method\":true"), "neither a string nor an integer"},
    {replace("\"method\":\"m\"", "\"method\":\"a\\qb\""), "unknown escape"},
    {replace("\"method\":\"m\"", "\"method\":\"\\ud800\""), "surrogate"},
    {replace("\"from\":\"a\",", ""), "missing field \"from\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line);
    auto back = trace::parse_record(c.line);
    REQUIRE_FALSE(back);
    CHECK(back.error().code == errc::malformed_message);
    CHECK(back.error().message.find(c.mentions) != std::string::npos);
  }
}

TEST_CASE("read_records keeps the good lines and counts the bad ones with the first error") {
  trace_builder b;
  b.ask(te, rm, "register_task_executor");
  std::stringstream in;
  in << trace::to_json(b.records[0]) << "\n\n"
     << "{\"seq\":1\n"
     << trace::to_json(b.records[1]) << "\n"
     << "garbage\n"
     << trace::to_json(b.records[2]); // the last line may lack its newline
  auto result = trace::read_records(in);
  REQUIRE(result.records.size() == 3);
  CHECK(result.records[1].dir == direction::receive);
  CHECK(result.bad_lines == 2);
  REQUIRE(result.first_error);
  CHECK(result.first_error->code == errc::malformed_message);
  CHECK(result.first_error->message.starts_with("line 3: "));
}

// -- filter -------------------------------------------------------------------------------------

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

// -- chrome -------------------------------------------------------------------------------------

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
  CHECK(processes
        == std::set<std::string>{"JobManager", "TaskManager tm-1", "TaskManager tm-2"});
}

// -- mermaid ------------------------------------------------------------------------------------

TEST_CASE("the mermaid export declares each endpoint once and draws calls in record order") {
  auto text = trace::export_mermaid(slot_protocol_trace().records);
  CHECK(text.starts_with("sequenceDiagram\n"));
  auto te_decl = text.find("participant task_executor_tm_1 as task_executor/tm-1\n");
  auto rm_decl = text.find("participant resource_manager as resource_manager\n");
  auto jm_decl = text.find("participant job_master_4f1d2c3b as job_master/4f1d2c3b\n");
  auto sp_decl = text.find("participant slot_pool_4f1d2c3b as slot_pool/4f1d2c3b\n");
  REQUIRE(te_decl != std::string::npos);
  REQUIRE(rm_decl != std::string::npos);
  REQUIRE(jm_decl != std::string::npos);
  REQUIRE(sp_decl != std::string::npos);
  CHECK(te_decl < rm_decl);
  CHECK(rm_decl < jm_decl);
  CHECK(jm_decl < sp_decl);
  std::size_t participants = 0;
  for (auto at = text.find("participant "); at != std::string::npos;
       at = text.find("participant ", at + 1))
    ++participants;
  CHECK(participants == 4);

  const std::vector<std::string> arrows = {
    "task_executor_tm_1->>resource_manager: register_task_executor\n",
    "resource_manager-->>task_executor_tm_1: register_task_executor\n",
    "task_executor_tm_1->>resource_manager: send_slot_report\n",
    "job_master_4f1d2c3b->>resource_manager: register_job_manager\n",
    "slot_pool_4f1d2c3b->>resource_manager: request_slot\n",
    "resource_manager-->>slot_pool_4f1d2c3b: request_slot\n",
    "resource_manager->>task_executor_tm_1: request_slot\n",
    "task_executor_tm_1->>job_master_4f1d2c3b: register_task_manager\n",
    "task_executor_tm_1->>job_master_4f1d2c3b: offer_slots\n",
    "resource_manager->>task_executor_tm_1: heartbeat_from_resource_manager (tell)\n",
    "job_master_4f1d2c3b->>task_executor_tm_1: submit_task\n",
    "task_executor_tm_1-->>job_master_4f1d2c3b: submit_task\n",
  };
  std::size_t at = 0;
  for (const auto& arrow : arrows) {
    CAPTURE(arrow);
    auto found = text.find(arrow, at);
    REQUIRE(found != std::string::npos);
    at = found + arrow.size();
  }
  // Each call once, at its receipt: 8 asks and a tell, then 8 replies.
  std::size_t calls = 0, replies = 0;
  for (std::size_t p = text.find("->>"); p != std::string::npos; p = text.find("->>", p + 1))
    (text[p - 1] == '-' ? replies : calls) += 1;
  CHECK(calls == 9);
  CHECK(replies == 8);
}

TEST_CASE("rejected and failed calls are crossed out and annotated") {
  trace_builder b;
  b.ask(pool, te, "submit_task", outcome::failed, "No slot; #3");
  b.tell(rm, te, "heartbeat_from_resource_manager", outcome::rejected);
  auto text = trace::export_mermaid(b.records);
  CHECK(text.find("task_executor_tm_1--xslot_pool_4f1d2c3b: submit_task\n") != std::string::npos);
  CHECK(text.find("Note over task_executor_tm_1: submit_task failed - No slot#59; #35;3\n")
        != std::string::npos);
  CHECK(text.find("resource_manager-xtask_executor_tm_1: heartbeat_from_resource_manager (tell)\n")
        != std::string::npos);
  CHECK(text.find("Note over task_executor_tm_1: heartbeat_from_resource_manager rejected\n")
        != std::string::npos);
}

TEST_CASE("an ask refused for its fencing token is annotated once, at its receipt") {
  trace_builder b;
  b.ask(rm, te, "request_slot", outcome::rejected, "Fencing token mismatch");
  b.records[1].result = outcome::rejected; // the receipt is where it was refused
  b.records[1].detail = "Fencing token mismatch";
  auto text = trace::export_mermaid(b.records);
  auto refused = text.find("resource_manager-xtask_executor_tm_1: request_slot\n");
  auto note = text.find(
    "Note over task_executor_tm_1: request_slot rejected - Fencing token mismatch\n");
  auto answer = text.find("task_executor_tm_1--xresource_manager: request_slot\n");
  REQUIRE(refused != std::string::npos);
  REQUIRE(note != std::string::npos);
  REQUIRE(answer != std::string::npos);
  CHECK(refused < note);
  CHECK(note < answer);
  CHECK(text.find("Note over", note + 1) == std::string::npos);
}

TEST_CASE("calls whose receipt is on another node are drawn at send and at response") {
  trace_builder b;
  b.ask(te, rm, "register_task_executor", outcome::timeout, "no answer in 10 s");
  std::vector<trace::record> caller_side = {b.records[0], b.records[3]};
  auto text = trace::export_mermaid(caller_side);
  auto call = text.find("task_executor_tm_1->>resource_manager: register_task_executor\n");
  auto answer = text.find("resource_manager--xtask_executor_tm_1: register_task_executor\n");
  auto note = text.find(
    "Note over task_executor_tm_1: register_task_executor timeout - no answer in 10 s\n");
  REQUIRE(call != std::string::npos);
  REQUIRE(answer != std::string::npos);
  REQUIRE(note != std::string::npos);
  CHECK(call < answer);
  CHECK(answer < note);
}

TEST_CASE("participant ids are sanitized, kept apart, and clear of Mermaid's keywords") {
  trace::record r;
  r.dir = direction::receive;
  r.from = "a/b";
  r.to = "a_b";
  r.method = "m";
  trace::record s = r;
  s.from = "end";
  s.to = "9lives";
  auto text = trace::export_mermaid(std::vector<trace::record>{r, s});
  CHECK(text.find("participant a_b as a/b\n") != std::string::npos);
  CHECK(text.find("participant a_b_2 as a_b\n") != std::string::npos);
  CHECK(text.find("participant p_end as end\n") != std::string::npos);
  CHECK(text.find("participant p_9lives as 9lives\n") != std::string::npos);
  CHECK(text.find("a_b->>a_b_2: m (tell)\n") != std::string::npos);
}
