// The scheduler without actors: pipelined regions in topological order, slot sharing, deployment
// checks, task states to the job's end, cancel and failures; the SlotPool and TaskExecutors are
// a recording stand-in.

#include <doctest/doctest.h>

#include <set>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "runtime/actors/job_master/scheduler/scheduler.hpp"
#include "test/runtime/actors/job_master/test_jobs.hpp"

using namespace flint;
using namespace flint::job_master;
using graph::execution_state;
using graph::job_status;
using graph::result_partition_type;

namespace {

struct recording_actions : scheduler_actions {
  std::vector<slot_pool::slot_request_id> allocations;
  std::vector<slot_pool::slot_request_id> releases;
  std::vector<std::pair<graph::execution_attempt_id, slot_pool::allocated_slot>> submits;
  std::vector<graph::task_deployment_descriptor> descriptors;
  std::vector<graph::execution_attempt_id> cancels;
  std::vector<job_status> statuses;
  std::string last_cause;
  std::vector<std::pair<std::chrono::milliseconds, std::uint64_t>> restarts;

  void allocate_slot(const slot_pool::slot_request_id& r,
                     const cluster::resource_profile&) override {
    allocations.push_back(r);
  }
  void release_slot(const slot_pool::slot_request_id& r, const std::string&) override {
    releases.push_back(r);
  }
  void submit_task(const graph::execution_attempt_id& a, const slot_pool::allocated_slot& s,
                   graph::task_deployment_descriptor tdd) override {
    submits.emplace_back(a, s);
    descriptors.push_back(std::move(tdd));
  }
  void cancel_task(const graph::execution_attempt_id& a,
                   const slot_pool::allocated_slot&) override {
    cancels.push_back(a);
  }
  void job_status_changed(job_status, job_status to, const std::string& cause) override {
    statuses.push_back(to);
    last_cause = cause;
  }
  void schedule_restart(std::chrono::milliseconds delay, std::uint64_t restart) override {
    restarts.emplace_back(delay, restart);
  }
  std::vector<std::pair<cluster::resource_id, std::vector<graph::intermediate_result_partition_id>>>
    released;
  void release_partitions(
    const cluster::resource_id& tm,
    std::vector<graph::intermediate_result_partition_id> partitions) override {
    released.emplace_back(tm, std::move(partitions));
  }
};

graph::execution_graph build(graph::job_graph job) {
  auto g = graph::execution_graph::build(std::move(job));
  REQUIRE_MESSAGE(g.has_value(), g.error().to_string());
  return std::move(*g);
}

struct scheduler_fixture {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
    std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(200);
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>("job_master", sink);
  recording_actions actions;
  graph::job_id job{0x11, 0x22};

  scheduler_fixture() { logger->set_pattern("%v"); }

  std::chrono::nanoseconds clock{std::chrono::hours(1)};

  std::unique_ptr<scheduler> make(graph::job_graph g) {
    return std::make_unique<scheduler>(build(std::move(g)), scheduler_settings{}, actions, logger);
  }
  /// With the restart strategy `restart-strategy.*` settings give (and the region strategy).
  std::unique_ptr<scheduler> make_restarting(graph::job_graph g,
                                             std::map<std::string, std::string> restart,
                                             std::string failover = "region") {
    config::configuration cfg;
    for (auto& [k, v] : restart)
      cfg.set(k, v);
    cfg.set("jobmanager.execution.failover-strategy", failover);
    auto strategy = failover::make_restart_backoff_time_strategy(cfg, false);
    REQUIRE_MESSAGE(strategy.has_value(), strategy.error().to_string());
    scheduler_settings settings;
    settings.restart_strategy = std::move(*strategy);
    settings.failover_strategy = [cfg](const graph::execution_graph& graph) {
      return std::move(*failover::make_failover_strategy(cfg, graph));
    };
    settings.clock = [this] { return clock; };
    return std::make_unique<scheduler>(build(std::move(g)), std::move(settings), actions, logger);
  }
  /// Ends the last scheduled restart delay.
  void restart_delay_over(scheduler& s) {
    REQUIRE(!actions.restarts.empty());
    s.on_restart_delay_elapsed(actions.restarts.back().second);
  }
  bool logged(const std::string& text) const {
    for (auto& line : sink->last_formatted())
      if (line.find(text) != std::string::npos)
        return true;
    return false;
  }
  static slot_pool::allocated_slot slot(int index, std::string tm = "task_executor/tm-1") {
    return slot_pool::allocated_slot{cluster::allocation_id{0xa, static_cast<std::uint64_t>(index)},
                                     index, cluster::task_manager_location{tm, "localhost", 0}, tm};
  }
  /// Gives every requested slot, in request order, slot i.
  void serve_all(scheduler& s) {
    for (std::size_t i = 0; i < actions.allocations.size(); ++i)
      s.on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i)));
  }
  void report(scheduler& s, const graph::execution_attempt_id& a, execution_state st,
              std::string cause = {}) {
    auto r = s.update_task_execution_state(cluster::task_execution_state{job, a, st, cause});
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  }
};

} // namespace

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "a pipelined job is one region: two shared slots, deployed once both are there, finished when every task is") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  CHECK(s->graph().regions().size() == 1);
  s->start_scheduling();
  CHECK(s->status() == job_status::running);
  CHECK(logged(
    "Job test job (00000000000000110000000000000022) switched from state CREATED to RUNNING."));
  // Slot sharing: subtask i of every vertex shares physical slot i.
  REQUIRE(actions.allocations.size() == 2);
  CHECK(s->shared_slot_count() == 2);
  s->on_slot_allocated(actions.allocations[0], slot(0));
  CHECK(actions.submits.empty()); // the region waits for all of its slots
  s->on_slot_allocated(actions.allocations[1], slot(1));
  REQUIRE(actions.submits.size() == 6);
  // Topological order: sources first; subtask i in slot i.
  CHECK(actions.submits[0].first.subtask_index == 0);
  CHECK(actions.submits[0].second.slot_index == 0);
  CHECK(actions.submits[1].second.slot_index == 1);
  CHECK(actions.submits[5].first.job_vertex == s->graph().job_vertex_of(2).id);
  CHECK(logged("Source: numbers (1/2)#0 (" + actions.submits[0].first.to_string()
               + ") switched from SCHEDULED to DEPLOYING."));
  CHECK(logged("Deploying Source: numbers (1/2) (attempt #0) with attempt id "
               + actions.submits[0].first.to_string()
               + " to task_executor/tm-1 @ localhost (dataPort=0) with allocation id "));
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  CHECK(s->status() == job_status::running);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::finished);
  CHECK(s->status() == job_status::finished);
  CHECK(actions.statuses == std::vector<job_status>{job_status::running, job_status::finished});
  // Both physical slots went back to the pool when their last task finished.
  CHECK(actions.releases.size() == 2);
  CHECK(s->shared_slot_count() == 0);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "each consumed partition names the TaskExecutor and data port of its producer's slot") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  s->start_scheduling();
  REQUIRE(actions.allocations.size() == 2);
  // Slot i on its own TaskExecutor with data port 6000 + i.
  for (int i = 0; i < 2; ++i) {
    auto sl = slot(i, "task_executor/tm-" + std::to_string(i + 1));
    sl.location.host = "host-" + std::to_string(i + 1);
    sl.location.data_port = static_cast<std::uint16_t>(6000 + i);
    s->on_slot_allocated(actions.allocations[static_cast<std::size_t>(i)], sl);
  }
  REQUIRE(actions.descriptors.size() == 6);
  std::size_t channels = 0;
  for (const auto& tdd : actions.descriptors) {
    for (const auto& gate : tdd.input_gates) {
      REQUIRE(gate.producer_locations.size() == gate.partition_numbers.size());
      for (std::size_t c = 0; c < gate.partition_numbers.size(); ++c) {
        // Partition n is written by producer subtask n, which runs in slot n.
        auto n = gate.partition_numbers[c];
        CHECK(gate.producer_locations[c]
              == graph::producer_location{"task_executor/tm-" + std::to_string(n + 1),
                                          "host-" + std::to_string(n + 1),
                                          static_cast<std::uint16_t>(6000 + n)});
        ++channels;
      }
    }
  }
  CHECK(channels > 0);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "a blocking exchange splits regions: the consumer region is scheduled once its input is finished") {
  auto s = make(test::chain_job(job, {2, 2}, {result_partition_type::blocking}));
  REQUIRE(s->graph().regions().size() == 4);
  s->start_scheduling();
  serve_all(*s);
  REQUIRE(actions.submits.size() == 2); // only the producers
  for (std::size_t i = 0; i < 2; ++i) {
    report(*s, actions.submits[i].first, execution_state::running);
    report(*s, actions.submits[i].first, execution_state::finished);
  }
  // The finished producers gave their slots back; the consumers ask again.
  serve_all(*s);
  REQUIRE(actions.submits.size() == 4);
  CHECK(actions.submits[2].first.job_vertex == s->graph().job_vertex_of(1).id);
  // Producer regions come before consumer regions in the order.
  auto& order = s->region_order();
  auto pos = [&](std::uint32_t vertex) {
    return std::find(order.begin(), order.end(), s->graph().vertices()[vertex].region)
      - order.begin();
  };
  CHECK(pos(0) < pos(2));
  CHECK(pos(1) < pos(3));
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "cancel while running cancels every deployed task and ends CANCELED with its slots released") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  s->start_scheduling();
  serve_all(*s);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  s->cancel();
  CHECK(s->status() == job_status::cancelling);
  CHECK(actions.cancels.size() == 6);
  for (auto& a : actions.cancels)
    report(*s, a, execution_state::canceled);
  CHECK(s->status() == job_status::canceled);
  CHECK(actions.releases.size() == 2);
  CHECK(actions.statuses.back() == job_status::canceled);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "cancel before the slots arrive cancels at once and withdraws the requests") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  s->start_scheduling();
  s->cancel();
  CHECK(s->status() == job_status::canceled);
  CHECK(actions.cancels.empty());
  CHECK(actions.releases.size() == 2);
  // A slot that arrives late is handed back.
  s->on_slot_allocated(actions.allocations[0], slot(0));
  CHECK(actions.releases.size() == 3);
  CHECK(actions.submits.empty());
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a failed task fails the job with its cause and the other tasks are canceled") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  s->start_scheduling();
  serve_all(*s);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  report(*s, actions.submits[2].first, execution_state::failed, "boom");
  CHECK(s->status() == job_status::failing);
  CHECK(actions.cancels.size() == 5);
  for (auto& a : actions.cancels)
    report(*s, a, execution_state::canceled);
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause() == "Map (1/2) failed: boom");
  CHECK(actions.last_cause == "Map (1/2) failed: boom");
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "a task that finishes while its cancel is on the way completes the cancellation") {
  auto s = make(test::chain_job(job, {2, 2, 2}));
  s->start_scheduling();
  serve_all(*s);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  report(*s, actions.submits[2].first, execution_state::failed, "boom");
  REQUIRE(actions.cancels.size() == 5);
  // The first task had finished before the cancel arrived: it reports FINISHED, never CANCELED.
  report(*s, actions.cancels[0], execution_state::finished);
  for (std::size_t i = 1; i < actions.cancels.size(); ++i)
    report(*s, actions.cancels[i], execution_state::canceled);
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause() == "Map (1/2) failed: boom");
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a submit time-out marks the execution FAILED with Flink's message") {
  auto s = make(test::chain_job(job, {1}));
  s->start_scheduling();
  serve_all(*s);
  REQUIRE(actions.submits.size() == 1);
  auto attempt = actions.submits[0].first;
  s->on_submit_result(attempt, make_error(errc::timeout, "ask timed out"));
  CHECK(s->graph().vertices()[0].current_execution.state() == execution_state::failed);
  CHECK(s->status() == job_status::failed);
  CHECK(
    s->failure_cause().find("Cannot deploy task Source: numbers (1/1) (" + attempt.to_string()
                            + ") - TaskManager (task_executor/tm-1 @ localhost (dataPort=0)) not "
                              "responding after a rpcTimeout of 10000 ms")
    != std::string::npos);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a lost task executor fails the executions in its slots and the job names it") {
  auto s = make(test::chain_job(job, {2, 2}));
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0], slot(0, "task_executor/tm-1"));
  s->on_slot_allocated(actions.allocations[1], slot(1, "task_executor/tm-2"));
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  auto n =
    s->fail_task_manager("task_executor/tm-2", "TaskManager task_executor/tm-2 disconnected: gone");
  CHECK(n == 2);
  CHECK(s->status() == job_status::failing);
  CHECK(actions.cancels.size() == 2); // only the tasks on tm-1
  for (auto& a : actions.cancels)
    report(*s, a, execution_state::canceled);
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause().find("task_executor/tm-2") != std::string::npos);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a slot request that fails fails the job with the pool's reason") {
  auto s = make(test::chain_job(job, {1, 1}));
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0],
                       make_error(errc::timeout, "no slot within 300000 ms"));
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause().find("no slot within 300000 ms") != std::string::npos);
}

TEST_CASE_FIXTURE(scheduler_fixture, "states of unknown or old attempts are refused") {
  auto s = make(test::chain_job(job, {1}));
  s->start_scheduling();
  serve_all(*s);
  auto a = actions.submits[0].first;
  a.attempt_number = 3;
  auto r = s->update_task_execution_state(
    cluster::task_execution_state{job, a, execution_state::running, {}});
  CHECK(!r.has_value());
  CHECK(r.error().code == errc::not_found);
  // The same subtask and attempt number of another ExecutionGraph (a former leadership's).
  auto former = actions.submits[0].first;
  former.execution_graph = graph::execution_graph_id{0x01d, 0x01d};
  REQUIRE(former.execution_graph != actions.submits[0].first.execution_graph);
  CHECK_FALSE(s->vertex_of(former).has_value());
  auto stale = s->update_task_execution_state(
    cluster::task_execution_state{job, former, execution_state::failed, "old"});
  CHECK(!stale.has_value());
  CHECK(stale.error().code == errc::not_found);
  CHECK(s->vertex_of(actions.submits[0].first).has_value());
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a 1000-task job needs one slot per subtask index and deploys every task") {
  logger->set_level(spdlog::level::warn);
  auto s = make(test::chain_job(job, {250, 250, 250, 250}));
  s->start_scheduling();
  REQUIRE(actions.allocations.size() == 250);
  serve_all(*s);
  REQUIRE(actions.submits.size() == 1000);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::finished);
  CHECK(s->status() == job_status::finished);
  CHECK(actions.releases.size() == 250);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a wide blocking exchange is scheduled region by region without per-edge work") {
  logger->set_level(spdlog::level::warn);
  auto s = make(test::chain_job(job, {500, 500}, {result_partition_type::blocking}));
  CHECK(s->region_order().size() == 1000);
  s->start_scheduling();
  serve_all(*s);
  REQUIRE(actions.submits.size() == 500);
  for (std::size_t i = 0; i < 500; ++i)
    report(*s, actions.submits[i].first, execution_state::finished);
  serve_all(*s);
  CHECK(actions.submits.size() == 1000);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a task repeating its current state is acknowledged and changes nothing") {
  auto s = make(test::chain_job(job, {1}));
  s->start_scheduling();
  serve_all(*s);
  auto a = actions.submits[0].first;
  report(*s, a, execution_state::deploying);
  CHECK(s->graph().vertices()[0].current_execution.state() == execution_state::deploying);
  report(*s, a, execution_state::initializing);
  report(*s, a, execution_state::running);
  CHECK(s->graph().vertices()[0].current_execution.state() == execution_state::running);
}

// -- failover ---------------------------------------------------------------------------------------

namespace {

/// Two pipelines in one job, not connected: "A source" -> "A sink" and "B source" -> "B sink",
/// parallelism 1 each, one slot sharing group (so both share one physical slot).
graph::job_graph two_pipelines(graph::job_id id) {
  auto a = test::chain_job(id, {1, 1});
  auto b = test::chain_job(id, {1, 1});
  auto job = a;
  auto offset = job.vertices.size();
  auto ds_offset = job.data_sets.size();
  auto edge_offset = job.edges.size();
  for (auto v : b.vertices) {
    v.id = graph::job_vertex_id{v.id.upper() + 0x100, v.id.lower() + 0x100};
    v.name = "B " + v.name;
    for (auto& e : v.inputs)
      e += edge_offset;
    for (auto& d : v.produced_data_sets)
      d += ds_offset;
    job.slot_sharing_groups[0].vertices.push_back(job.vertices.size());
    job.vertices.push_back(v);
  }
  for (auto ds : b.data_sets) {
    ds.id = graph::intermediate_data_set_id{0xd6, ds.id.lower()};
    ds.producer += offset;
    for (auto& c : ds.consumers)
      c += edge_offset;
    job.data_sets.push_back(ds);
  }
  for (auto e : b.edges) {
    e.source += ds_offset;
    e.target += offset;
    job.edges.push_back(e);
  }
  return job;
}

} // namespace

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "a TaskManager lost while the job is failing ends the job FAILED instead of leaving it FAILING") {
  // One-slot TaskManagers: every task of subtask 1 is on tm-2. A task on tm-1 fails first (its
  // channel from tm-2 broke), the job cancels tm-2's tasks, which never answer: tm-2 is dead,
  // and its heartbeat times out later.
  auto s = make(test::chain_job(job, {2, 2}));
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0], slot(0, "task_executor/tm-1"));
  s->on_slot_allocated(actions.allocations[1], slot(1, "task_executor/tm-2"));
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  auto on_tm1 = [&](const graph::execution_attempt_id& a) { return a.subtask_index == 0; };
  report(*s, actions.submits[2].first, execution_state::failed, "Connection to tm-2 lost");
  REQUIRE(s->status() == job_status::failing);
  for (auto& a : actions.cancels)
    if (on_tm1(a))
      report(*s, a, execution_state::canceled);
  CHECK(s->status() == job_status::failing);
  auto n = s->fail_task_manager("task_executor/tm-2",
                                "Heartbeat of TaskManager with id task_executor/tm-2 timed out.");
  CHECK(n == 2);
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause() == "Map (1/2) failed: Connection to tm-2 lost");
  CHECK(actions.statuses.back() == job_status::failed);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "under fixed-delay a task that fails once restarts its region: RESTARTING, RUNNING, FINISHED") {
  auto s = make_restarting(test::chain_job(job, {1, 1}),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "3"},
                            {"restart-strategy.fixed-delay.delay", "10 ms"}});
  s->start_scheduling();
  serve_all(*s);
  REQUIRE(actions.submits.size() == 2);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  report(*s, actions.submits[1].first, execution_state::failed, "java.lang.RuntimeException: boom");
  // One region holds every task: the whole job restarts.
  CHECK(s->status() == job_status::restarting);
  CHECK(logged(
    "Job test job (00000000000000110000000000000022) switched from state RUNNING to RESTARTING"));
  CHECK(logged("2 tasks will be restarted to recover the failed task "
               + actions.submits[1].first.to_string()));
  REQUIRE(actions.cancels.size() == 1);
  REQUIRE(actions.restarts.size() == 1);
  CHECK(actions.restarts[0].first == std::chrono::milliseconds(10));
  report(*s, actions.cancels[0], execution_state::canceled);
  CHECK(s->status() == job_status::restarting); // the delay is not over
  CHECK(actions.submits.size() == 2);
  restart_delay_over(*s);
  CHECK(s->status() == job_status::running);
  // New attempts ask for slots again and deploy as attempt #1.
  serve_all(*s);
  REQUIRE(actions.submits.size() == 4);
  CHECK(actions.submits[2].first.attempt_number == 1);
  CHECK(actions.submits[3].first.attempt_number == 1);
  CHECK(logged("(attempt #1)"));
  // A late state of the old attempt is refused and changes nothing.
  auto stale = s->update_task_execution_state(
    cluster::task_execution_state{job, actions.submits[0].first, execution_state::finished, {}});
  CHECK(!stale.has_value());
  for (std::size_t i = 2; i < 4; ++i) {
    report(*s, actions.submits[i].first, execution_state::running);
    report(*s, actions.submits[i].first, execution_state::finished);
  }
  CHECK(s->status() == job_status::finished);
  CHECK(actions.statuses
        == std::vector<job_status>{job_status::running, job_status::restarting, job_status::running,
                                   job_status::finished});
  REQUIRE(s->exception_history().entries().size() == 1);
  const auto& failure = s->exception_history().entries().front();
  CHECK(failure.task_name == "Map (1/1)");
  CHECK(failure.root_cause == "java.lang.RuntimeException: boom");
  CHECK(failure.location == "task_executor/tm-1 @ localhost (dataPort=0)");
  CHECK(failure.timestamp == 3600 * 1000);
  CHECK(s->exception_history().restarts() == 1);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "under none a failed task fails the job with its cause and the history keeps it") {
  auto s = make_restarting(test::chain_job(job, {1, 1}), {{"restart-strategy.type", "none"}});
  s->start_scheduling();
  serve_all(*s);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  report(*s, actions.submits[0].first, execution_state::failed, "boom");
  CHECK(s->status() == job_status::failing);
  CHECK(logged("Recovery is suppressed by NoRestartBackoffTimeStrategy"));
  CHECK(actions.restarts.empty());
  for (auto& a : actions.cancels)
    report(*s, a, execution_state::canceled);
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause() == "Source: numbers (1/1) failed: boom");
  CHECK(s->exception_history().entries().size() == 1);
  CHECK(s->exception_history().restarts() == 0);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "fixed-delay gives up after its attempts and the job fails with the last cause") {
  auto s = make_restarting(test::chain_job(job, {1}),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "2"},
                            {"restart-strategy.fixed-delay.delay", "0 ms"}});
  s->start_scheduling();
  for (int round = 0; round < 3; ++round) {
    serve_all(*s);
    auto a = actions.submits.back().first;
    CHECK(a.attempt_number == round);
    report(*s, a, execution_state::running);
    report(*s, a, execution_state::failed, "failure " + std::to_string(round));
    if (round < 2) {
      CHECK(s->status() == job_status::restarting);
      restart_delay_over(*s);
      CHECK(s->status() == job_status::running);
      actions.allocations.erase(actions.allocations.begin(), actions.allocations.end() - 1);
    }
  }
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause() == "Source: numbers (1/1) failed: failure 2");
  CHECK(s->exception_history().entries().size() == 3);
  CHECK(s->exception_history().restarts() == 2);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a failure in one of two disconnected pipelines restarts only its own region") {
  auto s = make_restarting(two_pipelines(job),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "1"},
                            {"restart-strategy.fixed-delay.delay", "0 ms"}});
  REQUIRE(s->graph().regions().size() == 2);
  s->start_scheduling();
  serve_all(*s);
  REQUIRE(actions.submits.size() == 4);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  auto failed = actions.submits[1].first; // A's sink
  report(*s, failed, execution_state::failed, "boom");
  CHECK(s->status() == job_status::running); // a region restart leaves the job RUNNING
  REQUIRE(actions.cancels.size() == 1);
  CHECK(actions.cancels[0] == actions.submits[0].first); // A's source only
  report(*s, actions.cancels[0], execution_state::canceled);
  restart_delay_over(*s);
  // The shared slot is still held by pipeline B: A's new attempts deploy into it at once.
  REQUIRE(actions.submits.size() == 6);
  CHECK(actions.submits[4].first.job_vertex == actions.submits[0].first.job_vertex);
  CHECK(actions.submits[4].first.attempt_number == 1);
  CHECK(actions.submits[5].first.attempt_number == 1);
  // B kept running, at attempt #0.
  int b_tasks = 0;
  for (const auto& ev : s->graph().vertices())
    if (s->graph().job_vertex_of(ev.job_vertex).name.starts_with("B ")) {
      ++b_tasks;
      CHECK(ev.current_execution.attempt_number() == 0);
      CHECK(ev.current_execution.state() == execution_state::running);
    }
  CHECK(b_tasks == 2);
  for (std::size_t i : {2u, 3u, 4u, 5u})
    report(*s, actions.submits[i].first, execution_state::finished);
  CHECK(s->status() == job_status::finished);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "in a BATCH job a consumer failure restarts only the consumer and its producers are not run again") {
  auto s = make_restarting(test::chain_job(job, {2, 2}, {result_partition_type::blocking}),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "1"},
                            {"restart-strategy.fixed-delay.delay", "0 ms"}});
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0], slot(0, "task_executor/tm-1"));
  s->on_slot_allocated(actions.allocations[1], slot(1, "task_executor/tm-2"));
  REQUIRE(actions.submits.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    report(*s, actions.submits[i].first, execution_state::running);
    report(*s, actions.submits[i].first, execution_state::finished);
  }
  auto served = actions.allocations.size();
  for (std::size_t i = 2; i < served; ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  REQUIRE(actions.submits.size() == 4);
  // The consumers find the finished producers where they ran, though their slots are gone.
  const auto& consumer_tdd = actions.descriptors[2];
  REQUIRE(consumer_tdd.input_gates.size() == 1);
  CHECK(consumer_tdd.input_gates[0].producer_locations[1].resource_id == "task_executor/tm-2");
  report(*s, actions.submits[2].first, execution_state::running);
  report(*s, actions.submits[3].first, execution_state::running);
  report(*s, actions.submits[2].first, execution_state::failed, "boom");
  CHECK(actions.cancels.empty()); // the other consumer is a region of its own
  CHECK(logged("1 tasks will be restarted to recover the failed task"));
  restart_delay_over(*s);
  for (std::size_t i = served; i < actions.allocations.size(); ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  REQUIRE(actions.submits.size() == 5);
  CHECK(actions.submits[4].first.job_vertex == actions.submits[2].first.job_vertex);
  CHECK(actions.submits[4].first.subtask_index == 0);
  CHECK(actions.submits[4].first.attempt_number == 1);
  report(*s, actions.submits[4].first, execution_state::finished);
  report(*s, actions.submits[3].first, execution_state::finished);
  CHECK(s->status() == job_status::finished);
  // The producers ran once.
  CHECK(s->graph().vertices()[0].current_execution.attempt_number() == 0);
  CHECK(s->graph().vertices()[1].current_execution.attempt_number() == 0);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "in a BATCH job a consumer whose producer's TaskManager is gone restarts that producer too") {
  auto s = make_restarting(test::chain_job(job, {2, 2}, {result_partition_type::blocking}),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "2"},
                            {"restart-strategy.fixed-delay.delay", "0 ms"}});
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0], slot(0, "task_executor/tm-1"));
  s->on_slot_allocated(actions.allocations[1], slot(1, "task_executor/tm-2"));
  for (std::size_t i = 0; i < 2; ++i)
    report(*s, actions.submits[i].first, execution_state::finished);
  auto served = actions.allocations.size();
  for (std::size_t i = 2; i < served; ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  REQUIRE(actions.submits.size() == 4);
  report(*s, actions.submits[2].first, execution_state::running);
  report(*s, actions.submits[3].first, execution_state::running);
  // tm-2 held producer 2's partition and runs nothing now: losing it fails no task ...
  CHECK(
    s->fail_task_manager("task_executor/tm-2", "TaskManager with id tm-2 is no longer reachable.")
    == 0);
  // ... but the consumer that reads it fails, and both regions reading it restart with producer 2.
  report(*s, actions.submits[2].first, execution_state::failed, "Partition not found");
  CHECK(actions.cancels.size() == 1);
  CHECK(actions.cancels[0] == actions.submits[3].first);
  report(*s, actions.submits[3].first, execution_state::canceled);
  restart_delay_over(*s);
  for (std::size_t i = served; i < actions.allocations.size(); ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  // Only producer 2 runs again first; the consumers wait for its partition.
  REQUIRE(actions.submits.size() == 5);
  CHECK(actions.submits[4].first.job_vertex == actions.submits[1].first.job_vertex);
  CHECK(actions.submits[4].first.subtask_index == 1);
  CHECK(actions.submits[4].first.attempt_number == 1);
  CHECK(s->graph().vertices()[0].current_execution.attempt_number() == 0);
}

TEST_CASE_FIXTURE(scheduler_fixture, "a restart delay that a later failure replaced is ignored") {
  auto s = make_restarting(two_pipelines(job),
                           {{"restart-strategy.type", "fixed-delay"},
                            {"restart-strategy.fixed-delay.attempts", "5"},
                            {"restart-strategy.fixed-delay.delay", "10 ms"}});
  s->start_scheduling();
  serve_all(*s);
  for (auto& [a, sl] : actions.submits)
    report(*s, a, execution_state::running);
  report(*s, actions.submits[0].first, execution_state::failed, "A broke");
  report(*s, actions.submits[2].first, execution_state::failed, "B broke");
  report(*s, actions.submits[1].first, execution_state::canceled);
  report(*s, actions.submits[3].first, execution_state::canceled);
  REQUIRE(actions.restarts.size() == 2);
  CHECK(s->status() == job_status::restarting); // every task is waiting now
  s->on_restart_delay_elapsed(actions.restarts[0].second);
  CHECK(actions.submits.size() == 4);
  s->on_restart_delay_elapsed(actions.restarts[1].second);
  CHECK(s->status() == job_status::running);
  CHECK(s->tasks_pending_restart() == 0);
  CHECK(s->exception_history().entries().size() == 2);
}

TEST_CASE_FIXTURE(scheduler_fixture,
                  "a waiting job lists its pending slot requests with their age") {
  auto s = make_restarting(test::chain_job(job, {2}), {{"restart-strategy.type", "none"}});
  s->start_scheduling();
  clock += std::chrono::seconds(7);
  auto pending = s->pending_slot_requests();
  REQUIRE(pending.size() == 2);
  CHECK(pending[0].second == std::chrono::seconds(7));
  s->on_slot_allocated(actions.allocations[0], slot(0));
  CHECK(s->pending_slot_requests().size() == 1);
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "a slot that never comes fails the job with NoResourceAvailableException whatever the restart strategy") {
  auto s = make_restarting(
    test::chain_job(job, {1}),
    {{"restart-strategy.type", "fixed-delay"}, {"restart-strategy.fixed-delay.attempts", "100"}});
  s->start_scheduling();
  s->on_slot_allocated(
    actions.allocations[0],
    make_error(errc::timeout,
               "Could not allocate the required slot within slot request timeout of 300000 ms."));
  CHECK(s->status() == job_status::failed);
  CHECK(s->failure_cause().find("NoResourceAvailableException") != std::string::npos);
  CHECK(actions.restarts.empty());
}

TEST_CASE_FIXTURE(
  scheduler_fixture,
  "blocking partitions are released at their TaskExecutors once every consumer finished, and a released one makes its producer run again") {
  auto s = make_restarting(
    test::chain_job(job, {2, 2, 1},
                    {result_partition_type::blocking, result_partition_type::blocking}),
    {{"restart-strategy.type", "fixed-delay"},
     {"restart-strategy.fixed-delay.attempts", "2"},
     {"restart-strategy.fixed-delay.delay", "0 ms"}});
  s->start_scheduling();
  s->on_slot_allocated(actions.allocations[0], slot(0, "task_executor/tm-1"));
  s->on_slot_allocated(actions.allocations[1], slot(1, "task_executor/tm-2"));
  for (std::size_t i = 0; i < 2; ++i)
    report(*s, actions.submits[i].first, execution_state::finished);
  CHECK(actions.released.empty()); // nobody read them yet
  auto served = actions.allocations.size();
  for (std::size_t i = 2; i < served; ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  REQUIRE(actions.submits.size() == 4);
  report(*s, actions.submits[2].first, execution_state::finished);
  CHECK(actions.released.empty()); // the ALL_TO_ALL group has a second consumer still running
  report(*s, actions.submits[3].first, execution_state::finished);
  // Both producers' partitions go, each at its own TaskExecutor.
  REQUIRE(actions.released.size() == 2);
  std::set<std::string> where;
  for (auto& [tm, partitions] : actions.released) {
    where.insert(tm);
    CHECK(partitions.size() == 1);
  }
  CHECK(where == std::set<std::string>{"task_executor/tm-1", "task_executor/tm-2"});
  // The last stage reads stage 2's partitions; when it fails it re-reads them: stage 2 is not
  // run again, and its own inputs, released, are not needed.
  for (std::size_t i = served; i < actions.allocations.size(); ++i)
    s->on_slot_allocated(actions.allocations[i], slot(static_cast<int>(i), "task_executor/tm-1"));
  REQUIRE(actions.submits.size() == 5);
  SUBCASE("stage 2's partitions are still there") {
    report(*s, actions.submits[4].first, execution_state::failed, "boom");
    CHECK(logged("1 tasks will be restarted to recover the failed task"));
    CHECK(s->tasks_pending_restart() == 1);
  }
  SUBCASE(
    "stage 2's TaskManager is gone: stage 2 runs again, and stage 1, whose partitions were released") {
    s->fail_task_manager("task_executor/tm-1", "TaskManager with id tm-1 is no longer reachable.");
    CHECK(s->tasks_pending_restart() == 5);
  }
}
