// Reading trace records back from the JSON lines to_json writes.

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/trace_tools/trace_reader.hpp"
#include "test/apps/trace_tools/trace_builder.hpp"

using namespace flint;
using namespace flint::trace_test;
using trace::direction;
using trace::outcome;

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
    // The JSON parser's own words, with the column where it stopped.
    {"", "invalid JSON at column 1: syntax error while parsing value - unexpected end of input"},
    {"not json", "invalid JSON at column 2: syntax error while parsing value - invalid literal"},
    {"[1,2]", "expected a JSON object"},
    {good.substr(0, good.size() / 2), "invalid JSON at column "},
    {good + "x", "expected end of input"},
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
    {replace("\"method\":\"m\"", "\"method\":\"a\\qb\""), "forbidden character after backslash"},
    {replace("\"method\":\"m\"", "\"method\":\"\\ud800\""), "surrogate"},
    {replace("\"from\":\"a\",", ""), "missing field \"from\""},
    // Raw bytes that are not UTF-8, as writers before to_json replaced them wrote.
    {replace("\"method\":\"m\"", "\"method\":\"caf\xe9\""), "ill-formed UTF-8 byte"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line);
    auto back = trace::parse_record(c.line);
    REQUIRE_FALSE(back);
    CHECK(back.error().code == errc::malformed_message);
    CHECK(back.error().message.find(c.mentions) != std::string::npos);
  }
}

TEST_CASE("a record with bytes that are not UTF-8 is read back with U+FFFD in their place") {
  const std::string replacement = "\xef\xbf\xbd";
  trace::record r;
  r.from = "task_executor/tm-\xfe";
  r.to = "resource_manager";
  r.method = "offer\xff_slots";
  r.detail = "caf\xe9 caf\xc3\xa9 \xe2\x82"; // Latin-1, UTF-8, a cut-off sequence
  auto line = trace::to_json(r);
  CHECK(nlohmann::json::accept(line));
  auto back = trace::parse_record(line);
  REQUIRE_MESSAGE(back, (back ? "" : back.error().to_string()));
  CHECK(back->from == "task_executor/tm-" + replacement);
  CHECK(back->method == "offer" + replacement + "_slots");
  CHECK(back->detail == "caf" + replacement + " caf\xc3\xa9 " + replacement + replacement);
  CHECK(trace::to_json(*back) == line); // writing what was read changes nothing
  std::stringstream in(line + "\n" + line + "\n");
  auto result = trace::read_records(in);
  CHECK(result.records.size() == 2);
  CHECK(result.bad_lines == 0);
  CHECK_FALSE(result.first_error);
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
