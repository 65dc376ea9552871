// The JobMaster's codecs (job_master_gateway.hpp).

#include <doctest/doctest.h>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/job_master.capnp.h"
#include "test/runtime/actors/protocol/codec_checks.hpp"

#include <capnp/message.h>

using namespace flint;
using namespace flint::job_master;
using namespace flint::test::protocol;

namespace {

register_task_manager_request sample_register_tm() {
  return {sample_text("task_executor/tm-7"), sample_location()};
}

offer_slots_request sample_offer_slots() {
  return {sample_text("task_executor/tm-7"), {sample_offer(0), sample_offer(1), sample_offer(2)}};
}

offer_slots_response sample_accepted() {
  return {{sample_offer(0), sample_offer(2)}};
}

cluster::task_execution_state sample_task_state() {
  return {sample_id<graph::job_id>(1), sample_attempt(), graph::execution_state::failed,
          sample_text("java.lang.RuntimeException: boom")};
}

disconnect_task_manager_request sample_disconnect_tm() {
  return {sample_text("task_executor/tm-7"), sample_text("heartbeat timeout")};
}

disconnect_resource_manager_request sample_disconnect_rm() {
  return {sample_token(2), sample_text("resource manager lost leadership")};
}

fail_slot_request sample_fail_slot() {
  return {sample_text("task_executor/tm-7"), sample_id<cluster::allocation_id>(3),
          sample_text("slot lost")};
}

task_io sample_task_io() {
  task_io t;
  t.attempt = sample_attempt();
  t.records_in = 1;
  t.records_out = 1LL << 40;
  t.bytes_in_local = 3;
  t.bytes_in_remote = 4;
  t.bytes_out = 5;
  t.buffers_out = 6;
  t.busy_ms_per_second = 250.5;
  t.idle_ms_per_second = 700.25;
  t.back_pressured_ms_per_second = 49.25;
  t.accumulated_busy_ms = 7;
  t.accumulated_idle_ms = 8;
  t.accumulated_back_pressured_ms = 9;
  t.checkpoint_alignment_time = 30'000'000;
  t.checkpoint_start_delay_nanos = 1LL << 33;
  return t;
}

acknowledge_checkpoint_request sample_acknowledge() {
  acknowledge_checkpoint_request a;
  a.job_id = sample_id<graph::job_id>(1);
  a.attempt = sample_attempt();
  a.checkpoint_id = 42;
  a.task_state.finished = true;
  a.checkpoint_metrics = {1 << 20, 0, 3'000'000'000LL, 12, 345, 7'000'000};
  return a;
}

} // namespace

TEST_SUITE("job master codecs") {
  TEST_CASE("an acknowledgement round-trips with the task's checkpoint metrics") {
    check_round_trip(sample_acknowledge());
    check_truncated_refused(sample_acknowledge());
  }

  TEST_CASE("an acknowledgement from a sender without checkpoint metrics reads them as -1") {
    // What a sender before the metrics writes: the first four fields only.
    auto bytes = rpc::codec<acknowledge_checkpoint_request>::encode(sample_acknowledge());
    auto old = wire::read<schema::JmAcknowledgeCheckpointRequest>(
      bytes, "acknowledgement",
      [](schema::JmAcknowledgeCheckpointRequest::Reader r) -> expected<std::vector<char>> {
        capnp::MallocMessageBuilder message;
        auto b = message.initRoot<schema::JmAcknowledgeCheckpointRequest>();
        b.setJobId(r.getJobId());
        b.setAttempt(r.getAttempt());
        b.setCheckpointId(r.getCheckpointId());
        b.setTaskState(r.getTaskState());
        return wire::to_bytes(message);
      });
    REQUIRE(old.has_value());
    auto back = rpc::codec<acknowledge_checkpoint_request>::decode(*old);
    REQUIRE(back.has_value());
    CHECK(back->checkpoint_id == 42);
    CHECK(back->task_state.finished);
    CHECK(back->checkpoint_metrics == checkpoint_metrics{-1, -1, -1, -1, -1, -1});
  }

  TEST_CASE("a task I/O report round-trips, running and final") {
    check_round_trip(task_io_report{{sample_task_io(), sample_task_io()}, false});
    check_round_trip(task_io_report{{sample_task_io()}, true});
    check_truncated_refused(task_io_report{{sample_task_io()}, true});
  }

  TEST_CASE("a job status response with its plan and vertices round-trips") {
    job_status_response r;
    r.status = graph::job_status::running;
    r.plan = sample_text("{\"jid\":\"x\",\"nodes\":[]}");
    vertex_status v;
    v.id = "0123456789abcdef0123456789abcdef";
    v.name = sample_text("Source: Collection Source -> Map");
    v.parallelism = 2;
    v.max_parallelism = 128;
    subtask_status s;
    s.subtask = 1;
    s.attempt = 3;
    s.status = graph::execution_state::running;
    s.task_manager = "task_executor/tm-7";
    s.host = "10.0.0.7";
    s.io = sample_task_io();
    s.io_final = true;
    v.subtasks = {s, subtask_status{}};
    r.vertices = {v, vertex_status{}};
    check_round_trip(r);
  }

  TEST_CASE("a register task manager request round-trips") {
    check_round_trip(sample_register_tm());
  }

  TEST_CASE("a task manager registration success round-trips") {
    check_round_trip(task_manager_registration_response{
      task_manager_registration_success{sample_text("job_master/0123")}});
  }

  TEST_CASE("a task manager registration decline round-trips") {
    check_round_trip(task_manager_registration_response{
      registration::registration_decline{sample_text("unknown job")}});
  }

  TEST_CASE("an offer slots request round-trips") {
    check_round_trip(sample_offer_slots());
    check_round_trip(offer_slots_request{"task_executor/tm-0", {}});
  }

  TEST_CASE("an offer slots response round-trips") {
    check_round_trip(sample_accepted());
    check_round_trip(offer_slots_response{});
  }

  TEST_CASE("a task execution state round-trips in every state") {
    check_round_trip(sample_task_state());
    for (int s = 0; s <= static_cast<int>(graph::execution_state::reconciling); ++s) {
      auto state = sample_task_state();
      state.state = static_cast<graph::execution_state>(s);
      CAPTURE(s);
      check_round_trip(state);
    }
  }

  TEST_CASE("a job status response round-trips in every status") {
    for (int s = 0; s <= static_cast<int>(graph::job_status::reconciling); ++s) {
      CAPTURE(s);
      check_round_trip(job_status_response{
        static_cast<graph::job_status>(s), {}, 0, 0, 0, 0, 0, {}, 0, {}, false});
    }
  }

  TEST_CASE(
    "a job status response with its exception history and pending slot requests round-trips") {
    job_status_response r;
    r.status = graph::job_status::restarting;
    r.failures = {
      job_failure{1700000000123, "Map (1/2)", "task_executor/tm-1 @ host (dataPort=6121)", "boom"},
      job_failure{1700000000000, "", "", "global: no slot"}};
    r.restarts = 3;
    r.tasks = 6;
    r.tasks_running = 2;
    r.slots_needed = 2;
    r.slots_assigned = 1;
    r.pending_slot_requests = {pending_slot_request{"SlotRequestId{ab}", 4200}};
    r.registered_task_managers = 1;
    check_round_trip(r);
  }

  TEST_CASE("a job master disconnect task manager request round-trips") {
    check_round_trip(sample_disconnect_tm());
  }

  TEST_CASE("a job master disconnect resource manager request round-trips") {
    check_round_trip(sample_disconnect_rm());
  }

  TEST_CASE("a fail slot request round-trips") {
    check_round_trip(sample_fail_slot());
  }

  TEST_CASE("truncated job master messages are refused as malformed") {
    check_truncated_refused(sample_register_tm());
    check_truncated_refused(
      task_manager_registration_response{task_manager_registration_success{"job_master/0123"}});
    check_truncated_refused(
      task_manager_registration_response{registration::registration_decline{"no"}});
    check_truncated_refused(sample_offer_slots());
    check_truncated_refused(sample_accepted());
    check_truncated_refused(sample_task_state());
    check_truncated_refused(
      job_status_response{graph::job_status::running, {}, 0, 0, 0, 0, 0, {}, 0, {}, false});
    check_truncated_refused(sample_disconnect_tm());
    check_truncated_refused(sample_disconnect_rm());
    check_truncated_refused(sample_fail_slot());
  }

  TEST_CASE("random bytes are refused as malformed by every job master codec") {
    check_random_refused<register_task_manager_request>();
    check_random_refused<task_manager_registration_response>();
    check_random_refused<offer_slots_request>();
    check_random_refused<offer_slots_response>();
    check_random_refused<cluster::task_execution_state>();
    check_random_refused<job_status_response>();
    check_random_refused<disconnect_task_manager_request>();
    check_random_refused<disconnect_resource_manager_request>();
    check_random_refused<fail_slot_request>();
  }

  TEST_CASE("a job status number past the enum is refused as malformed") {
    for (int bad : {static_cast<int>(graph::job_status::reconciling) + 1, 0x7f, 0xff}) {
      CAPTURE(bad);
      auto bytes = with_enum_byte(
        job_status_response{graph::job_status::running, {}, 0, 0, 0, 0, 0, {}, 0, {}, false},
        job_status_response{graph::job_status::failed, {}, 0, 0, 0, 0, 0, {}, 0, {}, false},
        static_cast<std::uint8_t>(bad));
      auto decoded = rpc::codec<job_status_response>::decode(bytes);
      check_refused(decoded);
      CHECK(decoded.error().message.find("job status") != std::string::npos);
    }
  }

  TEST_CASE("an execution state number past the enum is refused as malformed") {
    auto running = sample_task_state();
    running.state = graph::execution_state::running;
    auto finished = running;
    finished.state = graph::execution_state::finished;
    for (int bad : {static_cast<int>(graph::execution_state::reconciling) + 1, 0xff}) {
      CAPTURE(bad);
      auto decoded = rpc::codec<cluster::task_execution_state>::decode(
        with_enum_byte(running, finished, static_cast<std::uint8_t>(bad)));
      check_refused(decoded);
      CHECK(decoded.error().message.find("state") != std::string::npos);
    }
  }

} // TEST_SUITE

TEST_CASE("a job status response claiming millions of empty failures is refused, not allocated") {
  // Root JmJobStatusResponse (4 data words, 3 pointers) whose `failures` list holds `count`
  // zero-sized structs: 9 words that decoded into GiBs of job_failure values (test/fuzz).
  auto message = [](std::uint32_t count) {
    // clang-format off
    return std::vector<std::uint32_t>{
      0, 9,                    // segment table: one segment of 9 words
      0, 0x00030004,           // root: struct at +0, 4 data words, 3 pointers
      0, 0, 0, 0, 0, 0, 0, 0,  // data section
      (2 << 2) | 1, 7,         // failures: inline-composite list at +2, 0 words of elements
      0, 0, 0, 0,              // pendingSlotRequests, checkpoints: null
      count << 2, 0,           // tag: `count` elements of 0 data words and 0 pointers
    };
    // clang-format on
  };
  auto decode = [](const std::vector<std::uint32_t>& words) {
    return rpc::codec<job_status_response>::decode(std::span<const char>(
      reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint32_t)));
  };
  auto few = decode(message(3));
  REQUIRE_MESSAGE(few.has_value(), few.error().to_string());
  CHECK(few->failures.size() == 3);
  auto millions = decode(message(0x1000000));
  REQUIRE_FALSE(millions.has_value());
  CHECK(millions.error().code == errc::malformed_message);
}
