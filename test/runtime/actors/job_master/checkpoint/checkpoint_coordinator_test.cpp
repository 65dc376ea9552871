// The CheckpointCoordinator without actors: a recording JobMaster and a manual clock (times are
// plain milliseconds passed in).

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime/actors/job_master/checkpoint/checkpoint_coordinator.hpp"

namespace flint::job_master::checkpoint {

namespace {

using std::chrono::milliseconds;

struct recording_actions : checkpoint_actions {
  struct triggered {
    task_id task;
    std::int64_t id;
    time_ms timestamp;
  };
  std::vector<triggered> triggers;
  std::vector<std::pair<task_id, std::int64_t>> completes;
  std::vector<std::pair<task_id, std::int64_t>> aborts;
  std::vector<std::pair<milliseconds, std::uint64_t>> trigger_timers;
  std::vector<std::pair<milliseconds, std::int64_t>> timeouts;
  std::vector<std::string> job_failures;
  checkpoint_plan plan;
  std::vector<std::int64_t> finalized;
  std::vector<std::int64_t> discarded;
  /// Set: finalizing fails with it.
  std::optional<std::string> finalize_error;

  checkpoint_plan plan_checkpoint() override { return plan; }
  expected<finalized_checkpoint> finalize_checkpoint(const pending_checkpoint& p) override {
    if (finalize_error)
      return make_error(errc::internal, *finalize_error);
    finalized.push_back(p.id);
    auto metadata = std::make_shared<state::checkpoint_metadata>();
    metadata->checkpoint_id = p.id;
    return finalized_checkpoint{metadata, "/checkpoints/chk-" + std::to_string(p.id)};
  }
  void discard_checkpoint(const completed_checkpoint& c) override { discarded.push_back(c.id); }

  void trigger_checkpoint(const task_id& task, std::int64_t id, time_ms ts) override {
    triggers.push_back({task, id, ts});
  }
  void notify_checkpoint_complete(const task_id& task, std::int64_t id) override {
    completes.emplace_back(task, id);
  }
  void notify_checkpoint_aborted(const task_id& task, std::int64_t id) override {
    aborts.emplace_back(task, id);
  }
  void schedule_trigger(milliseconds delay, std::uint64_t generation) override {
    trigger_timers.emplace_back(delay, generation);
  }
  void schedule_timeout(milliseconds delay, std::int64_t id) override {
    timeouts.emplace_back(delay, id);
  }
  void fail_job(const std::string& cause) override { job_failures.push_back(cause); }
};

/// A task's acknowledged state of `bytes` bytes (inline).
state::task_state_snapshot state_of(std::size_t bytes) {
  state::task_state_snapshot s;
  s.operators.emplace_back().list_entries.emplace_back(bytes, 'x');
  return s;
}

task_id task(std::uint64_t vertex, int subtask) {
  return task_id{graph::execution_graph_id{}, graph::job_vertex_id{0, vertex}, subtask, 0};
}

const task_id source0 = task(1, 0);
const task_id source1 = task(1, 1);
const task_id sink0 = task(2, 0);

struct coordinator_fixture {
  recording_actions actions;
  checkpoint_settings settings = [] {
    checkpoint_settings s;
    s.interval = milliseconds(200);
    s.timeout = milliseconds(1000);
    return s;
  }();
  std::optional<checkpoint_coordinator> coordinator;

  checkpoint_coordinator& make() {
    coordinator.emplace(graph::job_id{1, 2}, settings, actions, nullptr);
    actions.plan = checkpoint_plan{{source0, source1}, {source0, source1, sink0}, {}, true};
    return *coordinator;
  }

  /// The generation of the last trigger timer scheduled.
  std::uint64_t generation() const { return actions.trigger_timers.back().second; }

  void ack_all(std::int64_t id, time_ms now) {
    for (const auto& t : {source0, source1, sink0})
      coordinator->acknowledge(t, id, state_of(100), now);
  }
};

} // namespace

TEST_SUITE("checkpoint coordinator") {
  TEST_CASE_FIXTURE(coordinator_fixture,
                    "periodic triggers come every interval and go to the source tasks") {
    auto& c = make();
    c.start_scheduler();
    REQUIRE(actions.trigger_timers.size() == 1);
    CHECK(actions.trigger_timers[0].first == milliseconds(200));
    c.on_trigger_timer(generation(), 200);
    REQUIRE(actions.triggers.size() == 2);
    CHECK(actions.triggers[0].task == source0);
    CHECK(actions.triggers[1].task == source1);
    CHECK(actions.triggers[0].id == 1);
    CHECK(actions.triggers[0].timestamp == 200);
    REQUIRE(actions.timeouts.size() == 1);
    CHECK(actions.timeouts[0] == std::pair{milliseconds(1000), std::int64_t{1}});
    REQUIRE(actions.trigger_timers.size() == 2);
    CHECK(actions.trigger_timers[1].first == milliseconds(200));
    CHECK(c.stats().in_progress == 1);
    // Checkpointing disabled (interval 0): the scheduler does not start.
    settings.interval = milliseconds(0);
    auto& d = make();
    d.start_scheduler();
    CHECK_FALSE(d.is_scheduler_running());
    CHECK(actions.trigger_timers.size() == 2);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a checkpoint completes when every task acknowledged, and every task is told") {
    auto& c = make();
    auto id = c.trigger_checkpoint(10);
    REQUIRE(id.has_value());
    CHECK(c.acknowledge(source0, *id, state_of(100), 20) == acknowledge_result::success);
    CHECK(c.acknowledge(source0, *id, state_of(100), 21) == acknowledge_result::duplicate);
    CHECK(c.acknowledge(task(9, 0), *id, state_of(100), 21) == acknowledge_result::unknown);
    CHECK(c.acknowledge(source1, *id, state_of(50), 22) == acknowledge_result::success);
    CHECK(c.number_of_pending() == 1);
    CHECK(actions.completes.empty());
    CHECK(c.acknowledge(sink0, *id, state_of(7), 30) == acknowledge_result::success);
    CHECK(c.number_of_pending() == 0);
    REQUIRE(actions.completes.size() == 3);
    CHECK(actions.completes[2] == std::pair{sink0, *id});
    auto s = c.stats();
    CHECK(s.completed == 1);
    CHECK(s.failed == 0);
    REQUIRE(s.latest_completed.has_value());
    CHECK(*s.latest_completed
          == completed_checkpoint{1, 10, 30, 157, "/checkpoints/chk-1", nullptr});
    // A late acknowledgement of a completed checkpoint is discarded.
    CHECK(c.acknowledge(sink0, *id, state_of(7), 40) == acknowledge_result::discarded);
    CHECK(c.acknowledge(sink0, 99, state_of(7), 40) == acknowledge_result::discarded);
  }

  TEST_CASE_FIXTURE(coordinator_fixture, "at most max-concurrent checkpoints are in progress") {
    auto& c = make();
    c.start_scheduler();
    c.on_trigger_timer(generation(), 200);
    REQUIRE(c.number_of_pending() == 1);
    auto triggered = actions.triggers.size();
    c.on_trigger_timer(generation(), 400);
    CHECK(actions.triggers.size() == triggered); // skipped: one is in progress
    CHECK(c.number_of_pending() == 1);
    CHECK(actions.trigger_timers.back().first == milliseconds(200));
    CHECK_FALSE(c.trigger_checkpoint(410).has_value());
    settings.max_concurrent = 2;
    auto& d = make();
    CHECK(d.trigger_checkpoint(0).has_value());
    CHECK(d.trigger_checkpoint(1).has_value());
    CHECK_FALSE(d.trigger_checkpoint(2).has_value());
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "min-pause delays the next trigger after a completed checkpoint") {
    settings.min_pause = milliseconds(150);
    auto& c = make();
    c.start_scheduler();
    c.on_trigger_timer(generation(), 200);
    ack_all(1, 350);
    // Due at 400, but the pause after 350 lasts until 500.
    c.on_trigger_timer(generation(), 400);
    CHECK(c.number_of_pending() == 0);
    CHECK(actions.trigger_timers.back().first == milliseconds(100));
    c.on_trigger_timer(generation(), 500);
    CHECK(c.number_of_pending() == 1);
    CHECK(actions.triggers.back().id == 2);
    CHECK(actions.triggers.back().timestamp == 500);
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a declined checkpoint is aborted, counted and its tasks told — past the tolerance the job fails") {
    settings.tolerable_failures = 1;
    auto& c = make();
    auto first = c.trigger_checkpoint(0);
    c.decline(sink0, *first, "state too large", 5);
    CHECK(c.number_of_pending() == 0);
    CHECK(c.stats().failed == 1);
    REQUIRE(actions.aborts.size() == 3);
    CHECK(actions.aborts[0] == std::pair{source0, *first});
    CHECK(actions.job_failures.empty()); // one failure is tolerated
    // A completed checkpoint resets the count of consecutive failures.
    auto ok = c.trigger_checkpoint(10);
    ack_all(*ok, 20);
    auto second = c.trigger_checkpoint(30);
    c.decline(source1, *second, "no", 35);
    CHECK(actions.job_failures.empty());
    auto third = c.trigger_checkpoint(40);
    c.decline(source1, *third, "no again", 45);
    REQUIRE(actions.job_failures.size() == 1);
    CHECK(actions.job_failures[0].find("Exceeded checkpoint tolerable failure threshold")
          != std::string::npos);
    CHECK(actions.job_failures[0].find("declined") != std::string::npos);
    // Declining a checkpoint that is not pending changes nothing.
    c.decline(source1, 77, "late", 50);
    CHECK(c.stats().failed == 3);
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a checkpoint not complete within the time-out expires — a time-out after completion does nothing") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    c.acknowledge(source0, *id, state_of(1), 10);
    c.on_checkpoint_timeout(*id, 1000);
    CHECK(c.number_of_pending() == 0);
    CHECK(c.stats().failed == 1);
    REQUIRE(actions.job_failures.size() == 1); // tolerance 0: the first failure fails the job
    CHECK(actions.job_failures[0].find("expired") != std::string::npos);
    auto next = c.trigger_checkpoint(1100);
    ack_all(*next, 1200);
    c.on_checkpoint_timeout(*next, 2100);
    CHECK(c.stats().completed == 1);
    CHECK(c.stats().failed == 1);
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "no checkpoint starts while a task is not running, and that is no checkpoint failure") {
    auto& c = make();
    c.start_scheduler();
    actions.plan.all_running = false;
    c.on_trigger_timer(generation(), 200);
    CHECK(actions.triggers.empty());
    CHECK(c.number_of_pending() == 0);
    CHECK(c.stats().failed == 1);
    CHECK(actions.job_failures.empty());
    CHECK(actions.trigger_timers.back().first == milliseconds(200)); // the next one still comes
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a later checkpoint that completes subsumes older pending ones without a failure") {
    settings.max_concurrent = 2;
    auto& c = make();
    auto first = c.trigger_checkpoint(0);
    auto second = c.trigger_checkpoint(10);
    ack_all(*second, 20);
    CHECK(c.number_of_pending() == 0);
    CHECK(c.pending(*first) == nullptr);
    CHECK(c.stats().failed == 0);
    CHECK(actions.job_failures.empty());
    CHECK(c.acknowledge(source0, *first, state_of(1), 30) == acknowledge_result::discarded);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "stopping the scheduler aborts pending checkpoints and outdates its timers") {
    auto& c = make();
    c.start_scheduler();
    auto old = generation();
    c.on_trigger_timer(old, 200);
    c.stop_scheduler(250);
    CHECK_FALSE(c.is_scheduler_running());
    CHECK(c.number_of_pending() == 0);
    CHECK(actions.job_failures.empty()); // a suspension is no checkpoint failure
    auto triggered = actions.triggers.size();
    c.on_trigger_timer(old, 400);
    CHECK(actions.triggers.size() == triggered);
    // A restart of the scheduler uses a new generation.
    c.start_scheduler();
    CHECK(generation() != old);
    c.on_trigger_timer(generation(), 600);
    CHECK(actions.triggers.size() == triggered + 2);
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a failover aborts pending checkpoints — the new attempts acknowledge the next one") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    c.abort_pending(failure_reason::job_failover, 5);
    CHECK(c.number_of_pending() == 0);
    CHECK(actions.job_failures.empty());
    auto restarted = task_id{graph::execution_graph_id{}, graph::job_vertex_id{0, 2}, 0, 1};
    actions.plan = checkpoint_plan{{source0}, {source0, restarted}, {}, true};
    auto next = c.trigger_checkpoint(10);
    REQUIRE(next.has_value());
    CHECK(*next == *id + 1);
    CHECK(c.acknowledge(sink0, *next, state_of(1), 11)
          == acknowledge_result::unknown); // the old attempt
    c.acknowledge(source0, *next, state_of(1), 12);
    c.acknowledge(restarted, *next, state_of(1), 13);
    CHECK(c.stats().completed == 1);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "only state.checkpoints.num-retained completed checkpoints are kept") {
    settings.num_retained = 2;
    auto& c = make();
    for (int i = 0; i < 3; ++i) {
      auto id = c.trigger_checkpoint(i * 10);
      ack_all(*id, i * 10 + 5);
    }
    REQUIRE(c.retained().size() == 2);
    CHECK(c.retained().front().id == 2);
    CHECK(c.retained().back().id == 3);
    CHECK(c.stats().completed == 3);
    CHECK(actions.discarded == std::vector<std::int64_t>{1}); // its files go
    REQUIRE(c.latest_completed() != nullptr);
    CHECK(c.latest_completed()->metadata->checkpoint_id == 3);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "the tasks' acknowledged states reach finalize — its pointer is retained") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    c.acknowledge(source0, *id, state_of(3), 1);
    REQUIRE(c.pending(*id) != nullptr);
    CHECK(c.pending(*id)->task_states.at(source0) == state_of(3));
    c.acknowledge(source1, *id, state_of(4), 2);
    c.acknowledge(sink0, *id, state_of(5), 3);
    CHECK(actions.finalized == std::vector<std::int64_t>{*id});
    CHECK(c.latest_completed()->external_pointer == "/checkpoints/chk-1");
    CHECK(c.latest_completed()->state_bytes == 12);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a checkpoint whose metadata cannot be written is aborted and counted") {
    settings.tolerable_failures = 1;
    auto& c = make();
    actions.finalize_error = "Cannot write /ro/chk-1/_metadata: Read-only file system";
    auto first = c.trigger_checkpoint(0);
    ack_all(*first, 5);
    CHECK(c.stats().completed == 0);
    CHECK(c.stats().failed == 1);
    CHECK(c.latest_completed() == nullptr);
    CHECK(actions.completes.empty());
    CHECK(actions.aborts.size() == 3);
    CHECK(actions.job_failures.empty()); // one is tolerated
    auto second = c.trigger_checkpoint(10);
    ack_all(*second, 15);
    REQUIRE(actions.job_failures.size() == 1);
    CHECK(actions.job_failures.front().find("Failure to finalize checkpoint.")
          != std::string::npos);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a task that is not ready declines without counting against the tolerance") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    c.decline(source0, *id, "Task Source is not running.", 1, failure_reason::task_not_ready);
    CHECK(c.number_of_pending() == 0);
    CHECK(c.stats().failed == 1);
    CHECK(actions.job_failures.empty());
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a task that finishes before it acknowledged aborts the checkpoint, uncounted") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    c.acknowledge(source0, *id, state_of(1), 1);
    c.task_finished(source0, 2); // acknowledged already: nothing changes
    CHECK(c.number_of_pending() == 1);
    c.task_finished(source1, 3);
    CHECK(c.number_of_pending() == 0);
    CHECK(c.stats().failed == 1);
    CHECK(actions.job_failures.empty());
  }

  TEST_CASE_FIXTURE(
    coordinator_fixture,
    "a savepoint completes apart from checkpoints: not retained, its path handed on") {
    auto& c = make();
    std::optional<expected<std::string>> result;
    auto id = c.trigger_savepoint(
      0, savepoint_request{"/savepoints/savepoint-1", false, [&](expected<std::string> r) {
                             result = std::move(r);
                           }});
    REQUIRE(id.has_value());
    CHECK(c.pending(*id)->savepoint.has_value());
    auto checkpoint = c.trigger_checkpoint(1); // max-concurrent 1, yet a savepoint is no bar...
    CHECK_FALSE(checkpoint.has_value()); // ...for it; a checkpoint waits for the savepoint
    ack_all(*id, 5);
    REQUIRE(result.has_value());
    REQUIRE(result->has_value());
    CHECK(**result == "/checkpoints/chk-1"); // what finalize returned
    CHECK(c.retained().empty());
    // An intermediate savepoint commits no side effects (FLIP-193): a failover restores the
    // checkpoint before it, and a sink that had committed would write its records twice.
    CHECK(actions.completes.empty());
    SUBCASE("the next checkpoint commits what was pending at the savepoint") {
      auto next = c.trigger_checkpoint(10);
      REQUIRE(next.has_value());
      ack_all(*next, 15);
      CHECK(actions.completes.size() == 3);
      CHECK(actions.completes.back().second == *next);
    }
    SUBCASE("a failed savepoint is reported and does not fail the job") {
      std::optional<expected<std::string>> failed;
      auto next = c.trigger_savepoint(
        10, savepoint_request{"/savepoints/savepoint-2", false, [&](expected<std::string> r) {
                                failed = std::move(r);
                              }});
      c.decline(source0, *next, "no", 11);
      REQUIRE(failed.has_value());
      CHECK_FALSE(failed->has_value());
      CHECK(actions.job_failures.empty());
    }
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a decline from a task that does not take part (a stale attempt) is ignored") {
    auto& c = make();
    auto id = c.trigger_checkpoint(0);
    REQUIRE(id.has_value());
    // An attempt the plan does not have.
    auto stale = task_id{graph::execution_graph_id{}, graph::job_vertex_id{0, 2}, 0, 7};
    c.decline(stale, *id, "a woken TaskManager's old task", 1);
    CHECK(c.pending(*id) != nullptr);
    CHECK(actions.aborts.empty());
    ack_all(*id, 5);
    CHECK(c.stats().completed == 1);
  }

  TEST_CASE_FIXTURE(coordinator_fixture, "stop-with-savepoint commits its side effects") {
    auto& c = make();
    std::optional<expected<std::string>> result;
    auto id = c.trigger_savepoint(
      0, savepoint_request{"/savepoints/savepoint-1", true, [&](expected<std::string> r) {
                             result = std::move(r);
                           }});
    REQUIRE(id.has_value());
    ack_all(*id, 5);
    REQUIRE(result.has_value());
    CHECK(actions.completes.size() == 3); // the job ends on it: the sinks commit now
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a finished task brings the next checkpoint forward, within the rules") {
    settings.min_pause = milliseconds(100);
    auto& c = make();
    c.trigger_after_finished_task(0); // the scheduler is not running: nothing
    CHECK(actions.triggers.empty());
    c.start_scheduler();
    c.trigger_after_finished_task(10);
    CHECK(c.number_of_pending() == 1);
    auto pending_id = actions.triggers.back().id;
    c.trigger_after_finished_task(11); // one in progress: nothing more
    CHECK(c.number_of_pending() == 1);
    ack_all(pending_id, 20);
    c.trigger_after_finished_task(50); // within min-pause of the completion: nothing
    CHECK(c.number_of_pending() == 0);
    c.trigger_after_finished_task(130);
    CHECK(c.number_of_pending() == 1);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "a task that finishes while a checkpoint is in progress gets the next one as "
                    "soon as that one completes, not an interval later") {
    auto& c = make();
    c.start_scheduler();
    auto first = c.trigger_checkpoint(0);
    REQUIRE(first.has_value());
    // Triggered before the task finished: not the final checkpoint of the tasks after it.
    c.trigger_after_finished_task(5);
    CHECK(actions.triggers.size() == 2); // source0 and source1 of the first only
    ack_all(*first, 20);
    REQUIRE(c.number_of_pending() == 1);
    CHECK(actions.triggers.back().id == *first + 1);
    // Completing that one triggers nothing more: no task finished since it was triggered.
    ack_all(*first + 1, 30);
    CHECK(c.number_of_pending() == 0);
  }

  TEST_CASE_FIXTURE(coordinator_fixture, "after a restore the ids count on from the savepoint") {
    auto& c = make();
    c.restored_from(41);
    CHECK(*c.trigger_checkpoint(0) == 42);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "only the planned tasks are triggered and told — finished ones are not") {
    auto& c = make();
    actions.plan = checkpoint_plan{{sink0}, {sink0}, {source0, source1}, true};
    auto id = c.trigger_checkpoint(0);
    REQUIRE(actions.triggers.size() == 1);
    CHECK(actions.triggers[0].task == sink0);
    c.acknowledge(sink0, *id, state_of(1), 2);
    CHECK(actions.completes == std::vector<std::pair<task_id, std::int64_t>>{{sink0, *id}});
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "at the job's end retained checkpoints go unless the retention keeps them") {
    SUBCASE("finished: always discarded") {
      settings.retention = externalized_retention::retain_on_cancellation;
      auto& c = make();
      ack_all(*c.trigger_checkpoint(0), 1);
      c.shutdown(graph::job_status::finished, 2);
      CHECK(actions.discarded == std::vector<std::int64_t>{1});
      CHECK(c.retained().empty());
    }
    SUBCASE("canceled with RETAIN_ON_CANCELLATION: kept") {
      settings.retention = externalized_retention::retain_on_cancellation;
      auto& c = make();
      ack_all(*c.trigger_checkpoint(0), 1);
      c.shutdown(graph::job_status::canceled, 2);
      CHECK(actions.discarded.empty());
    }
    SUBCASE("canceled with DELETE_ON_CANCELLATION, failed: kept only when failed") {
      settings.retention = externalized_retention::delete_on_cancellation;
      auto& c = make();
      ack_all(*c.trigger_checkpoint(0), 1);
      c.shutdown(graph::job_status::failed, 2);
      CHECK(actions.discarded.empty());
      c.shutdown(graph::job_status::canceled, 3);
      CHECK(actions.discarded == std::vector<std::int64_t>{1});
    }
    SUBCASE("no externalized checkpoints: discarded on failure too") {
      auto& c = make();
      ack_all(*c.trigger_checkpoint(0), 1);
      c.shutdown(graph::job_status::failed, 2);
      CHECK(actions.discarded == std::vector<std::int64_t>{1});
    }
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "the history keeps the newest checkpoints and how each ended, and a checkpoint "
                    "asked for is not held back by the concurrent maximum") {
    auto& c = make();
    c.set_history_size(2);
    auto first = c.trigger_checkpoint(10);
    REQUIRE(first);
    REQUIRE(c.history().size() == 1);
    CHECK(c.history()[0].status == checkpoint_record::state::in_progress);
    CHECK(c.history()[0].tasks.size() == 3);
    // max-concurrent 1: a periodic trigger is refused, an asked one starts.
    CHECK_FALSE(c.trigger_checkpoint(11));
    auto asked = c.trigger_checkpoint_on_demand(12);
    REQUIRE(asked);
    CHECK(c.number_of_pending() == 2);
    c.acknowledge(source0, *first, state_of(100), 15);
    CHECK(c.history()[0].tasks.at(source0) == std::pair<time_ms, std::uint64_t>{15, 100});
    CHECK(c.history()[0].tasks.at(sink0).first == -1);
    c.decline(sink0, *first, "boom", 16);
    CHECK(c.history()[0].status == checkpoint_record::state::failed);
    CHECK(c.history()[0].end_time == 16);
    CHECK(c.history()[0].failure_message.find("boom") != std::string::npos);
    ack_all(*asked, 20);
    CHECK(c.history()[1].status == checkpoint_record::state::completed);
    CHECK(c.history()[1].end_time == 20);
    CHECK(c.history()[1].external_path == "/checkpoints/chk-" + std::to_string(*asked));
    CHECK(c.history()[1].state_bytes > 0);
    // A third: the oldest goes.
    auto third = c.trigger_checkpoint(30);
    REQUIRE(third);
    REQUIRE(c.history().size() == 2);
    CHECK(c.history()[0].id == *asked);
    CHECK(c.history()[1].id == *third);
  }

  TEST_CASE_FIXTURE(coordinator_fixture,
                    "the history keeps what each task measured, from its acknowledgement") {
    auto& c = make();
    auto id = c.trigger_checkpoint(10);
    REQUIRE(id);
    CHECK(c.history()[0].task_metrics.empty());
    state::checkpoint_metrics measured{4096, 0, 2'000'000, 3, 40, 1'500'000};
    c.acknowledge(source0, *id, state_of(100), 15, measured);
    // An acknowledgement without figures (an older sender): all -1.
    c.acknowledge(sink0, *id, state_of(10), 16);
    const auto& r = c.history()[0];
    CHECK(r.task_metrics.size() == 2);
    CHECK(r.task_metrics.at(source0) == measured);
    CHECK(r.task_metrics.at(sink0) == state::checkpoint_metrics{});
    CHECK(r.task_metrics.at(sink0).alignment_duration_nanos == -1);
  }

} // TEST_SUITE

} // namespace flint::job_master::checkpoint
