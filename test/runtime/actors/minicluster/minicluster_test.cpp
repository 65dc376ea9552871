// Whole-cluster protocol scenarios in one actor system on the deterministic scheduler: every
// endpoint is real, every message is an envelope, time moves only when the test says so.

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>

#include <caf/all.hpp>

#include "runtime/actors/dispatcher/dispatcher.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/minicluster/minicluster.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/task_executor/task_executor.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"
#include "test/support/test_fixture.hpp"
#include "test/support/test_jobs.hpp"

using namespace flint;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

struct cluster_fixture : test_fixture {
  std::optional<minicluster::minicluster> cluster;
  caf::actor client;

  void start(int task_managers, int slots, task_executor::invokable_factory invokables = {},
             std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5),
             config::configuration configuration = {}) {
    minicluster::minicluster_config cfg;
    cfg.configuration = std::move(configuration);
    cfg.number_of_task_managers = task_managers;
    cfg.number_of_slots_per_task_manager = slots;
    cfg.detached_tasks = false; // tasks on the deterministic scheduler
    cfg.blocking_shutdown = false; // the test runs the scheduler itself
    cfg.invokables = std::move(invokables);
    cfg.slot_request_timeout = slot_request_timeout;
    cluster.emplace(sys, cfg, &recorder);
    cluster->start();
    client = spawn<fake_endpoint>(context("client", std::chrono::hours(1)));
    run();
  }

  ~cluster_fixture() {
    if (cluster) {
      cluster->shutdown();
      run();
    }
  }

  rpc::gateway dispatcher() {
    auto gw = cluster->dispatcher_gateway();
    REQUIRE(gw.has_value());
    return *gw;
  }

  template <class M>
  std::optional<expected<typename M::response>> ask(const typename M::request& req) {
    std::optional<expected<typename M::response>> out;
    auto gw = dispatcher();
    in_main_thread<fake_endpoint>(client, [&, gw](fake_endpoint& self) {
      gw.ask<M>(self, req, [&](expected<typename M::response> r) { out.emplace(std::move(r)); });
    });
    run();
    return out;
  }

  /// Asks for the job's result; the answer may come later (see `result`).
  std::shared_ptr<std::optional<expected<dispatcher::job_result>>> await_result(graph::job_id id) {
    auto out = std::make_shared<std::optional<expected<dispatcher::job_result>>>();
    auto gw = dispatcher();
    in_main_thread<fake_endpoint>(client, [out, gw, id](fake_endpoint& self) {
      gw.ask<dispatcher::request_job_result>(
        self, dispatcher::job_id_request{id},
        [out](expected<dispatcher::job_result> r) { out->emplace(std::move(r)); });
    });
    run();
    return out;
  }

  graph::job_status status(graph::job_id id) {
    auto s = ask<dispatcher::request_job_status>(dispatcher::job_id_request{id});
    REQUIRE(s.has_value());
    REQUIRE(s->has_value());
    return (*s)->status;
  }

  std::size_t running_tasks() {
    std::size_t n = 0;
    for (auto& te : cluster->task_managers())
      n += deref<task_executor::task_executor>(te).number_of_running_tasks();
    return n;
  }

  /// The (direction, method) of receive records, in order, as the callee saw them.
  std::vector<std::pair<trace::direction, std::string>> steps_of_slot_protocol() const {
    return {
      {trace::direction::receive, "register_task_executor"},
      {trace::direction::receive, "send_slot_report"},
      {trace::direction::receive, "submit_job"},
      {trace::direction::receive, "allocate_slot"}, // the scheduler asks its SlotPool
      {trace::direction::receive, "register_job_manager"},
      {trace::direction::receive, "connect_to_resource_manager"},
      {trace::direction::receive, "request_slot"}, // at the ResourceManager
      {trace::direction::receive, "request_slot"}, // at the TaskExecutor
      {trace::direction::receive, "register_task_manager"},
      {trace::direction::receive, "offer_slots"},
      {trace::direction::receive, "submit_task"},
      {trace::direction::receive, "update_task_execution_state"},
      {trace::direction::receive, "free_slot"},
      {trace::direction::receive, "notify_slot_available"},
    };
  }
};

bool has_record(const std::vector<trace::record>& records, const std::string& to_prefix,
                const std::string& method) {
  for (auto& r : records)
    if (r.dir == trace::direction::receive && r.method == method && r.to.rfind(to_prefix, 0) == 0)
      return true;
  return false;
}

} // namespace

TEST_CASE_FIXTURE(
  cluster_fixture,
  "a 3-vertex job at parallelism 2 on one TaskExecutor with 2 slots runs to FINISHED through the slot protocol") {
  start(1, 2);
  auto job = test::three_vertex_job(2);
  REQUIRE(job.vertices.size() == 3);
  auto submitted = ask<dispatcher::submit_job>(dispatcher::submit_job_request{job});
  REQUIRE(submitted.has_value());
  REQUIRE(submitted->has_value());
  auto result = await_result(job.job_id);
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::finished);
  CHECK(status(job.job_id) == graph::job_status::finished);

  auto records = trace();
  CHECK(test::contains_in_order(records, steps_of_slot_protocol()));
  if (std::getenv("FLINT_PRINT_TRACE") != nullptr)
    for (auto& r : records)
      if (r.dir == trace::direction::receive)
        MESSAGE(r.from << " -> " << r.to << " " << r.method);
  // The request_slot steps happen at the right endpoints, in order.
  std::vector<std::string> request_slot_targets;
  for (auto& r : records)
    if (r.dir == trace::direction::receive && r.method == "request_slot")
      request_slot_targets.push_back(r.to);
  REQUIRE(request_slot_targets.size() >= 2);
  CHECK(request_slot_targets.front() == "resource_manager");
  CHECK(request_slot_targets.back().rfind("task_executor/", 0) == 0);
  // 6 tasks were deployed and each reported RUNNING and FINISHED (states in the trace payloads
  // are not visible; count the updates instead: at least 2 per task).
  int submits = 0, updates = 0;
  for (auto& r : records) {
    if (r.dir == trace::direction::receive && r.method == "submit_task")
      ++submits;
    if (r.dir == trace::direction::receive && r.method == "update_task_execution_state")
      ++updates;
  }
  CHECK(submits == 6);
  CHECK(updates >= 12);
  CHECK(running_tasks() == 0);
  // Every slot is free again once the job is over.
  auto& te = deref<task_executor::task_executor>(cluster->task_managers().front());
  CHECK(te.slot_table().number_of_free_slots()
        == static_cast<std::size_t>(te.slot_table().number_of_slots()));
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "too few slots: the job waits until a second TaskExecutor registers") {
  start(1, 1); // the job needs 2 slots (parallelism 2, one sharing group)
  auto job = test::three_vertex_job(2, 2);
  auto submitted = ask<dispatcher::submit_job>(dispatcher::submit_job_request{job});
  REQUIRE(submitted.has_value());
  REQUIRE(submitted->has_value());
  auto result = await_result(job.job_id);
  CHECK_FALSE(result->has_value());
  CHECK(status(job.job_id) != graph::job_status::finished);
  cluster->add_task_manager();
  run();
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::finished);
}

TEST_CASE_FIXTURE(cluster_fixture, "cancel while RUNNING ends CANCELED with every slot free") {
  start(1, 2, task_executor::make_invokable_factory<task_executor::blocking_invokable>());
  auto job = test::three_vertex_job(2, 3);
  REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{job})->has_value());
  CHECK(status(job.job_id) == graph::job_status::running);
  CHECK(running_tasks() == 6);
  auto result = await_result(job.job_id);
  CHECK_FALSE(result->has_value());
  auto cancelled = ask<dispatcher::cancel_job>(dispatcher::job_id_request{job.job_id});
  REQUIRE(cancelled.has_value());
  REQUIRE(cancelled->has_value());
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::canceled);
  CHECK(running_tasks() == 0);
  auto& te = deref<task_executor::task_executor>(cluster->task_managers().front());
  CHECK(te.slot_table().number_of_free_slots()
        == static_cast<std::size_t>(te.slot_table().number_of_slots()));
  CHECK(has_record(trace(), "task_executor/", "cancel_task"));
}

TEST_CASE_FIXTURE(cluster_fixture, "a failing task fails the job with its cause") {
  start(1, 2,
        task_executor::make_invokable_factory<task_executor::counting_invokable>(
          3, 2, std::string("user function threw: boom")));
  auto job = test::three_vertex_job(2, 4);
  REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{job})->has_value());
  auto result = await_result(job.job_id);
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::failed);
  CHECK((**result)->failure_cause.find("boom") != std::string::npos);
}

TEST_CASE_FIXTURE(
  cluster_fixture,
  "a task that fails on its first attempt restarts under fixed-delay and the job finishes") {
  config::configuration configuration;
  configuration.set("restart-strategy.type", "fixed-delay");
  configuration.set("restart-strategy.fixed-delay.attempts", "3");
  configuration.set("restart-strategy.fixed-delay.delay", "10 ms");
  auto attempts = std::make_shared<std::vector<int>>();
  task_executor::invokable_factory invokables =
    [attempts](
      const graph::task_deployment_descriptor& tdd) -> std::unique_ptr<task_executor::invokable> {
    attempts->push_back(tdd.attempt_number);
    // Subtask 1 of the middle vertex throws on its first attempt only.
    bool fail =
      tdd.attempt_number == 0 && tdd.subtask_index == 1 && tdd.task_name.rfind("Map", 0) == 0;
    return std::make_unique<task_executor::counting_invokable>(3, fail ? 2 : 0,
                                                               "user function threw: boom");
  };
  start(1, 2, std::move(invokables), std::chrono::minutes(5), configuration);
  auto job = test::three_vertex_job(2, 77);
  REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{job})->has_value());
  auto result = await_result(job.job_id);
  for (int i = 0; i < 10 && !result->has_value(); ++i)
    advance(10ms);
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::finished);
  // Six tasks ran twice: one pipelined region, so every task restarted, as attempt #1.
  REQUIRE(attempts->size() == 12);
  CHECK(std::count(attempts->begin(), attempts->end(), 1) == 6);
  CHECK(has_record(trace(), "job_master/", "update_task_execution_state"));
  auto status = ask<dispatcher::request_job_status>(dispatcher::job_id_request{job.job_id});
  REQUIRE(status.has_value());
  REQUIRE(status->has_value());
  CHECK((*status)->status == graph::job_status::finished);
  // The archive keeps what the JobMaster went through.
  CHECK((*status)->restarts == 1);
  REQUIRE((*status)->failures.size() == 1);
  CHECK((*status)->failures[0].cause.find("boom") != std::string::npos);
  CHECK((*status)->failures[0].task.rfind("Map", 0) == 0);
}

TEST_CASE_FIXTURE(cluster_fixture, "bad input gets clear errors and the cluster keeps serving") {
  start(1, 2, {}, 30s);
  SUBCASE("a malformed job graph") {
    std::optional<expected<std::vector<char>>> r;
    auto gw = dispatcher();
    in_main_thread<fake_endpoint>(client, [&, gw](fake_endpoint& self) {
      gw.ask_raw(self, dispatcher::submit_job::id, "submit_job", {'j', 'u', 'n', 'k', 0, 0, 0, 0},
                 std::nullopt, [&](expected<std::vector<char>> x) { r.emplace(std::move(x)); });
    });
    run();
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::malformed_message);
  }
  SUBCASE("cancel of an unknown job id") {
    auto r = ask<dispatcher::cancel_job>(dispatcher::job_id_request{graph::job_id{7, 7}});
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().code == errc::not_found);
    CHECK(r->error().message.find(graph::job_id{7, 7}.to_string()) != std::string::npos);
  }
  SUBCASE("a job that needs more slots than can ever exist fails after slot.request.timeout") {
    auto big = test::three_vertex_job(3, 5); // 3 slots, the cluster has 2
    REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{big})->has_value());
    auto result = await_result(big.job_id);
    CHECK_FALSE(result->has_value());
    for (int i = 0; i < 31 && !result->has_value(); ++i)
      advance(1s);
    REQUIRE(result->has_value());
    REQUIRE((*result)->has_value());
    CHECK((**result)->status == graph::job_status::failed);
    CHECK_FALSE((**result)->failure_cause.empty());
  }
  SUBCASE("a job with a bad restart or failover setting is refused naming the key") {
    const std::vector<std::pair<std::string, std::string>> bad{
      {"restart-strategy.type", "sometimes"},
      {"restart-strategy.fixed-delay.attempts", "-1"},
      {"restart-strategy.fixed-delay.delay", "ten seconds"},
      {"jobmanager.execution.failover-strategy", "nearby"}};
    std::uint64_t n = 40;
    for (const auto& [key, value] : bad) {
      CAPTURE(key);
      auto job = test::three_vertex_job(1, n++);
      job.execution_config.job_configuration[key] = value;
      if (key != "restart-strategy.type" && key != "jobmanager.execution.failover-strategy")
        job.execution_config.job_configuration["restart-strategy.type"] = "fixed-delay";
      auto r = ask<dispatcher::submit_job>(dispatcher::submit_job_request{job});
      REQUIRE(r.has_value());
      REQUIRE_FALSE(r->has_value());
      CHECK(r->error().code == errc::invalid_argument);
      CHECK(r->error().message.find(key) != std::string::npos);
      CHECK(r->error().message.find(value) != std::string::npos);
      // Nothing of it stays behind.
      auto st = ask<dispatcher::request_job_status>(dispatcher::job_id_request{job.job_id});
      REQUIRE(st.has_value());
      CHECK_FALSE(st->has_value());
    }
  }
  SUBCASE("a job submitted twice") {
    auto job = test::three_vertex_job(1, 6);
    REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{job})->has_value());
    auto again = ask<dispatcher::submit_job>(dispatcher::submit_job_request{job});
    REQUIRE(again.has_value());
    REQUIRE_FALSE(again->has_value());
    CHECK(again->error().message.find("already been submitted") != std::string::npos);
  }
  // Still serving: a good job finishes.
  auto ok = test::three_vertex_job(2, 99);
  REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{ok})->has_value());
  auto result = await_result(ok.job_id);
  REQUIRE(result->has_value());
  REQUIRE((*result)->has_value());
  CHECK((**result)->status == graph::job_status::finished);
}

TEST_CASE_FIXTURE(cluster_fixture, "list_jobs shows running and finished jobs") {
  start(1, 2);
  auto job = test::three_vertex_job(2, 8);
  REQUIRE(ask<dispatcher::submit_job>(dispatcher::submit_job_request{job})->has_value());
  auto result = await_result(job.job_id);
  REQUIRE(result->has_value());
  auto list = ask<dispatcher::list_jobs>(rpc::ack{});
  REQUIRE(list.has_value());
  REQUIRE(list->has_value());
  REQUIRE((*list)->jobs.size() == 1);
  CHECK((*list)->jobs[0].job_id == job.job_id);
  CHECK((*list)->jobs[0].status == graph::job_status::finished);
  CHECK((*list)->jobs[0].name == "three vertices");
  CHECK((*list)->jobs[0].number_of_tasks == 6);
}
