// The REST bodies built from gateway answers, without a cluster: Flink's field names, the
// vertex aggregate state, the error body, the "why" reasons and the trace page.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <limits>

#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/rest/rest_json.hpp"

using namespace flint;
using namespace flint::rest;
using graph::execution_state;
using json = nlohmann::json;

namespace {

job_master::vertex_status vertex(std::initializer_list<execution_state> states) {
  job_master::vertex_status v;
  v.id = "v";
  v.parallelism = static_cast<std::int32_t>(states.size());
  std::int32_t i = 0;
  for (auto s : states) {
    job_master::subtask_status t;
    t.subtask = i++;
    t.status = s;
    v.subtasks.push_back(t);
  }
  return v;
}

job_view running_job() {
  job_view j;
  j.details.job_id = graph::job_id::from_string("0123456789abcdef0123456789abcdef").value();
  j.details.name = "WordCount";
  j.details.status = graph::job_status::running;
  j.details.start_time_ms = 1000;
  j.details.end_time_ms = -1;
  j.report.tasks = 4;
  j.report.tasks_running = 2;
  j.report.slots_needed = 4;
  j.report.slots_assigned = 2;
  j.report.pending_slot_requests = {{"SlotRequestId{a}", 12000}, {"SlotRequestId{b}", 3000}};
  return j;
}

} // namespace

TEST_CASE("a vertex's state aggregates its subtasks' as Flink's ExecutionJobVertex does") {
  using s = execution_state;
  CHECK(aggregate_state(vertex({s::running, s::failed})) == s::failed);
  CHECK(aggregate_state(vertex({s::running, s::canceling})) == s::canceling);
  CHECK(aggregate_state(vertex({s::running, s::deploying})) == s::running);
  CHECK(aggregate_state(vertex({s::finished, s::running})) == s::running);
  CHECK(aggregate_state(vertex({s::finished, s::finished})) == s::finished);
  CHECK(aggregate_state(vertex({s::scheduled, s::deploying})) == s::deploying);
  CHECK(aggregate_state(vertex({s::created, s::created})) == s::created);
}

TEST_CASE("errors are Flink's {\"errors\": [...]}") {
  auto j = json::parse(errors_json("Job x not found"));
  REQUIRE(j["errors"].is_array());
  CHECK(j["errors"][0] == "Job x not found");
}

TEST_CASE("the why view names the pending slot requests, the free slots and refused calls") {
  auto job = running_job();
  resource_manager::resource_overview o;
  o.number_task_managers = 1;
  o.number_registered_slots = 2;
  o.number_free_slots = 0;
  std::vector<trace::record> recent;
  trace::record refused;
  refused.sequence = 7;
  refused.dir = trace::direction::response;
  refused.from = "job_master/0123456789abcdef0123456789abcdef";
  refused.to = "resource_manager";
  refused.method = "request_slot";
  refused.result = trace::outcome::rejected;
  recent.push_back(refused);
  trace::record other = refused;
  other.from = "job_master/ffffffffffffffffffffffffffffffff";
  recent.push_back(other);
  auto j = json::parse(job_why_json(job, o, recent, 100000, 10000));
  CHECK(j["state"] == "RUNNING");
  CHECK(j["tasks"] == 4);
  CHECK(j["tasks-running"] == 2);
  REQUIRE(j["pending-slot-requests"].size() == 2);
  CHECK(j["pending-slot-requests"][0]["age-ms"] == 12000);
  REQUIRE(j["refused-calls"].size() == 1); // the other job's call is not this job's
  CHECK(j["refused-calls"][0]["seq"] == 7);
  std::string all;
  for (const auto& r : j["reasons"])
    all += r.get<std::string>() + "\n";
  CHECK(all.find("2 of 4 tasks are not running.") != std::string::npos);
  CHECK(all.find("2 slot request(s) wait for a slot, the oldest for 12 s.") != std::string::npos);
  CHECK(all.find("0 free slot(s) of 2 on 1 TaskManager(s)") != std::string::npos);
  CHECK(all.find("request_slot") != std::string::npos);
}

TEST_CASE("a heartbeat target not heard from for two intervals is overdue") {
  auto job = running_job();
  trace::record hb;
  hb.from = "job_master/0123456789abcdef0123456789abcdef";
  hb.to = "task_executor@tm-a";
  hb.method = "heartbeat_from_job_manager";
  hb.dir = trace::direction::response;
  hb.time_us = 50000 * 1000;
  std::vector<trace::record> recent{hb};
  auto fresh = json::parse(job_why_json(job, std::nullopt, recent, 60000, 10000));
  CHECK(fresh["overdue-heartbeats"].empty());
  auto stale = json::parse(job_why_json(job, std::nullopt, recent, 80001, 10000));
  REQUIRE(stale["overdue-heartbeats"].size() == 1);
  CHECK(stale["overdue-heartbeats"][0]["target"] == "task_executor@tm-a");
  CHECK(stale["overdue-heartbeats"][0]["last-ms-ago"] == 30001);
}

TEST_CASE("the jobs overview counts a job's subtasks per state in Flink's lower-case keys") {
  auto job = running_job();
  job.report.vertices = {vertex({execution_state::running, execution_state::deploying})};
  auto j = json::parse(jobs_overview_json({job}, 5000));
  const auto& e = j["jobs"][0];
  CHECK(e["jid"] == "0123456789abcdef0123456789abcdef");
  CHECK(e["duration"] == 4000);
  CHECK(e["end-time"] == -1);
  CHECK(e["tasks"]["running"] == 1);
  CHECK(e["tasks"]["deploying"] == 1);
  CHECK(e["tasks"]["total"] == 2);
}

TEST_CASE("a vertex's watermarks are its subtasks' input watermarks; the why view names the holder") {
  auto job = running_job();
  auto v = vertex({execution_state::running, execution_state::running});
  v.name = "Window(TumblingEventTimeWindows)";
  v.subtasks[0].io.input_watermark = 5000;
  v.subtasks[0].io.watermark_held_back_by = "channel 0/1 from Source: clicks (2/2) at 5000";
  v.subtasks[0].io.late_records_dropped = 3;
  v.subtasks[1].io.input_watermark = 7000;
  v.subtasks[1].io.input_idle = true;
  job.report.vertices = {v};
  auto list = vertex_watermarks_json(job, "v");
  REQUIRE(list);
  auto w = json::parse(*list);
  REQUIRE(w.size() == 2);
  CHECK(w[0]["id"] == "0.currentInputWatermark");
  CHECK(w[0]["value"] == "5000");
  CHECK(w[1]["value"] == "7000");
  CHECK_FALSE(vertex_watermarks_json(job, "no such vertex"));

  auto why = json::parse(job_why_json(job, std::nullopt, {}, 100000, 10000));
  REQUIRE(why["watermarks"].size() == 1);
  const auto& entry = why["watermarks"][0];
  CHECK(entry["vertex"] == "Window(TumblingEventTimeWindows)");
  CHECK(entry["low-watermark"] == "5000");
  CHECK(entry["lowest-subtask"] == 0);
  CHECK(entry["held-back-by"] == "channel 0/1 from Source: clicks (2/2) at 5000");
  CHECK(entry["idle-subtasks"] == 1);
  CHECK(entry["late-records-dropped"] == 3);
  // Before any watermark: Long.MIN_VALUE, as Flink reports it.
  job.report.vertices[0].subtasks[0].io = {};
  auto none = json::parse(*vertex_watermarks_json(job, "v"));
  CHECK(none[0]["value"] == "-9223372036854775808");
}

TEST_CASE("a checkpoint's subtasks show what their acknowledgements measured, with summaries") {
  auto job = running_job();
  job_master::checkpoint_entry e;
  e.id = 7;
  e.status = "COMPLETED";
  e.trigger_time = 10'000;
  e.end_time = 10'500;
  // Subtask 0 aligned for 30 ms, 1 for 10 ms; 2 acknowledged without figures (an older sender);
  // 3 has not acknowledged.
  e.tasks = {{"v", 0, 10'400, 100, {4096, 0, 30'000'000, 5, 200, 2'000'000}},
             {"v", 1, 10'300, 100, {1024, 0, 10'000'000, 3, 100, 4'000'000}},
             {"v", 2, 10'200, 100, {}},
             {"v", 3, -1, 0, {}},
             {"src", 0, 10'100, 50, {0, 0, 0, 1, 20, 1'000'000}}};
  e.state_bytes = 350;
  job.report.checkpoint_history = {e};

  auto j = json::parse(*checkpoint_subtasks_json(job, 7, "v"));
  CHECK(j["processed_data"] == 5120);
  CHECK(j["persisted_data"] == 0);
  const auto& s = j["subtasks"];
  REQUIRE(s.size() == 4);
  CHECK(s[0]["checkpoint"] == json{{"sync", 5}, {"async", 200}});
  CHECK(s[0]["alignment"]
        == json{{"buffered", 0}, {"processed", 4096}, {"persisted", 0}, {"duration", 30}});
  CHECK(s[0]["start_delay"] == 2);
  CHECK(s[1]["alignment"]["duration"] == 10);
  CHECK(s[1]["start_delay"] == 4);
  // Unknown stays -1, and out of the summaries.
  CHECK(s[2]["checkpoint"] == json{{"sync", -1}, {"async", -1}});
  CHECK(s[2]["alignment"]["duration"] == -1);
  CHECK(s[2]["start_delay"] == -1);
  CHECK(s[3]["status"] == "pending_or_failed");
  const auto& summary = j["summary"];
  CHECK(summary["alignment"]["duration"]["min"] == 10);
  CHECK(summary["alignment"]["duration"]["max"] == 30);
  CHECK(summary["alignment"]["duration"]["avg"] == 20);
  CHECK(summary["alignment"]["processed"]["max"] == 4096);
  CHECK(summary["alignment"]["buffered"]["max"] == 0);
  CHECK(summary["checkpoint_duration"]["sync"]["min"] == 3);
  CHECK(summary["checkpoint_duration"]["async"]["max"] == 200);
  CHECK(summary["start_delay"]["avg"] == 3);
  CHECK(summary["start_delay"]["p50"].get<double>() == doctest::Approx(3.0));

  // The checkpoint and the job's summary add up the tasks' processed bytes.
  auto details = json::parse(*checkpoint_details_json(job, 7));
  CHECK(details["processed_data"] == 5120);
  CHECK(details["tasks"]["v"]["processed_data"] == 5120);
  CHECK(details["tasks"]["src"]["processed_data"] == 0);
  auto all = json::parse(job_checkpoints_json(job));
  CHECK(all["summary"]["processed_data"]["max"] == 5120);
  CHECK(all["latest"]["completed"]["processed_data"] == 5120);

  // Counts a peer sent absurdly large add up to the largest count, not to a negative one.
  job.report.checkpoint_history[0].tasks[0].metrics.bytes_processed_during_alignment =
    std::numeric_limits<std::int64_t>::max() - 10;
  auto huge = json::parse(*checkpoint_subtasks_json(job, 7, "v"));
  CHECK(huge["processed_data"] == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("a vertex's metrics include its subtasks' last checkpoint alignment time and start delay") {
  auto job = running_job();
  job.report.vertices = {vertex({execution_state::running, execution_state::running})};
  job.report.vertices[0].subtasks[0].io.checkpoint_alignment_time = 30'000'000;
  job.report.vertices[0].subtasks[0].io.checkpoint_start_delay_nanos = 2'000'000;
  job.report.vertices[0].subtasks[1].io.checkpoint_start_delay_nanos = 4'000'000;
  auto got = json::parse(*vertex_metrics_json(
    job, "v", "0.checkpointAlignmentTime,0.checkpointStartDelayNanos,1.checkpointStartDelayNanos"));
  REQUIRE(got.size() == 3);
  CHECK(got[0] == json{{"id", "0.checkpointAlignmentTime"}, {"value", "30000000"}});
  CHECK(got[1] == json{{"id", "0.checkpointStartDelayNanos"}, {"value", "2000000"}});
  CHECK(got[2] == json{{"id", "1.checkpointStartDelayNanos"}, {"value", "4000000"}});
  auto max = json::parse(
    *subtasks_metrics_json(job, "v", "checkpointStartDelayNanos", "max", std::nullopt));
  REQUIRE(max.size() == 1);
  CHECK(max[0]["max"] == 4'000'000);
}
