// The Mermaid sequence-diagram export.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/trace_tools/mermaid_export.hpp"
#include "test/apps/trace_tools/trace_builder.hpp"

using namespace flint;
using namespace flint::trace_test;
using trace::direction;
using trace::outcome;

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
  auto note =
    text.find("Note over task_executor_tm_1: request_slot rejected - Fencing token mismatch\n");
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
  auto note =
    text.find("Note over task_executor_tm_1: register_task_executor timeout - no answer in 10 s\n");
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
