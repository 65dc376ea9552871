// The JobMaster and its SlotPool against the real ResourceManager and TaskExecutor endpoints in
// one actor system on the test coordinator (tasks on the test scheduler, not detached).

#include <doctest/doctest.h>

#include <caf/all.hpp>

#include "runtime/actors/job_master/job_master.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/slot_pool/slot_pool.hpp"
#include "runtime/actors/task_executor/task_executor.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"
#include "test/runtime/actors/job_master/test_jobs.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace std::chrono_literals;
using flint::test::test_fixture;
using graph::job_status;
using trace::direction;

namespace {

const graph::job_id job{0xc1, 0xc2};
const std::string jm_id = "job_master/" + job.to_string();
const std::string tm_id = "task_executor/tm-1";

struct granted_contender : leader::leader_contender {
  rpc::fencing_token granted;
  void grant_leadership(const rpc::fencing_token& id) override { granted = id; }
  void revoke_leadership() override { granted = {}; }
  std::string description() const override { return "job master runner"; }
};

struct cluster_fixture : test_fixture {
  leader::embedded_ha_services ha{11};
  rpc::endpoint_directory directory;
  std::unique_ptr<leader::leader_election_service> rm_election = ha.resource_manager_election();
  std::unique_ptr<leader::leader_election_service> jm_election = ha.job_master_election(job);
  granted_contender runner;
  std::vector<job_master::job_master_result> results;
  bool blocking_tasks = false;
  bool stop_on_terminal = false;
  caf::actor rm;
  caf::actor te;
  caf::actor te2;
  caf::actor jm;

  cluster_fixture() {
    // Field by field: the services structs grow (loggers) without breaking this test.
    resource_manager::resource_manager_services rm_services;
    rm_services.election = rm_election.get();
    rm_services.directory = &directory;
    rm = spawn<resource_manager::resource_manager>(
      context("resource_manager"), resource_manager::resource_manager_config{}, rm_services);
    te = spawn_task_executor(tm_id, slots_of_first);
    run();
  }

  int slots_of_first = 2;

  caf::actor spawn_task_executor(const std::string& id, int slots) {
    task_executor::task_executor_config te_cfg;
    te_cfg.resource_id = id;
    te_cfg.number_of_slots = slots;
    te_cfg.detached_tasks = false;
    task_executor::task_executor_services te_services;
    te_services.ha = &ha;
    te_services.directory = &directory;
    te_services.invokables =
      [this](
        const graph::task_deployment_descriptor&) -> std::unique_ptr<task_executor::invokable> {
      if (blocking_tasks)
        return std::make_unique<task_executor::blocking_invokable>();
      return std::make_unique<task_executor::noop_invokable>();
    };
    return spawn<task_executor::task_executor>(context(id), te_cfg, te_services);
  }

  /// What the Dispatcher's runner does: contend, spawn the JobMaster under the granted id,
  /// confirm the leadership with its address.
  void submit(graph::job_graph g) {
    jm_election->start(runner);
    REQUIRE(!runner.granted.is_nil());
    job_master::job_master_services services{&ha, &directory,
                                             [this](job_master::job_master_result r) {
                                               results.push_back(std::move(r));
                                               if (stop_on_terminal) // as the Dispatcher does
                                                 caf::anon_send_exit(
                                                   jm, caf::exit_reason::user_shutdown);
                                             },
                                             nullptr};
    jm = spawn<job_master::job_master>(context(jm_id), std::move(g), runner.granted,
                                       job_master::job_master_config{}, services);
    jm_election->confirm_leadership(runner.granted, leader::leader_address{jm_id, jm, {}, 0});
    run();
  }

  job_master::job_master& master() { return deref<job_master::job_master>(jm); }

  /// The endpoints stop while the leader services and the directory they use still exist.
  ~cluster_fixture() {
    for (auto* a : {&jm, &te2, &te, &rm})
      if (*a)
        caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    run();
    sched.clock().cancel_all();
    run();
  }
  task_executor::task_executor& executor() { return deref<task_executor::task_executor>(te); }
};

} // namespace

TEST_CASE_FIXTURE(cluster_fixture,
                  "a 3 x 2 job runs to FINISHED on one task executor with two slots") {
  REQUIRE(executor().is_connected_to_resource_manager());
  submit(test::chain_job(job, {2, 2, 2}));
  CHECK(master().status() == job_status::finished);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::finished);
  CHECK(executor().slot_table().number_of_free_slots() == 2);
  // Every call of the flow was accepted (no refused token, no unknown attempt or state).
  for (const auto& r : trace())
    if (r.dir == direction::reply && r.method != "request_heartbeat"
        && r.method != "receive_heartbeat")
      CHECK_MESSAGE(r.result == trace::outcome::ok, (r.method + ": " + r.detail));
  CHECK(flint::test::contains_in_order(trace(),
                                       {{direction::receive, "register_task_executor"},
                                        {direction::receive, "allocate_slot"},
                                        {direction::receive, "register_job_manager"},
                                        {direction::receive, "request_slot"},
                                        {direction::receive, "request_slot"},
                                        {direction::receive, "register_task_manager"},
                                        {direction::receive, "offer_slots"},
                                        {direction::receive, "submit_task"},
                                        {direction::receive, "update_task_execution_state"},
                                        {direction::receive, "free_slot"}}));
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "cancel while running ends CANCELED with every slot free again") {
  blocking_tasks = true;
  submit(test::chain_job(job, {2, 2, 2}));
  REQUIRE(master().status() == job_status::running);
  CHECK(executor().number_of_running_tasks() == 6);
  CHECK(executor().slot_table().number_of_free_slots() == 0);
  // The Dispatcher's cancel_job becomes this fenced call; the TE's main thread stands in.
  rpc::gateway gw(jm, jm_id, runner.granted);
  in_main_thread<task_executor::task_executor>(te, [gw](task_executor::task_executor& self) {
    gw.ask<job_master::cancel>(self, rpc::ack{}, [](expected<rpc::ack>) {});
  });
  run();
  CHECK(master().status() == job_status::canceled);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::canceled);
  CHECK(executor().number_of_running_tasks() == 0);
  CHECK(executor().slot_table().number_of_free_slots() == 2);
}

TEST_CASE_FIXTURE(cluster_fixture, "heartbeats keep a long-running job alive") {
  blocking_tasks = true;
  submit(test::chain_job(job, {2, 2, 2}));
  REQUIRE(master().status() == job_status::running);
  for (int i = 0; i < 30; ++i)
    advance(10s);
  CHECK(master().status() == job_status::running);
  CHECK(master().is_registered_task_manager(tm_id));
  CHECK(master().connected_to_resource_manager());
  CHECK(results.empty());
}

TEST_CASE_FIXTURE(cluster_fixture,
                  "with too few slots the job waits, and a second task executor lets it run") {
  blocking_tasks = true;
  // Two vertices at parallelism 3 need three slots; the first TE has two.
  submit(test::chain_job(job, {3, 3}));
  CHECK(master().status() == job_status::running);
  CHECK(executor().number_of_running_tasks() == 0);
  CHECK(executor().slot_table().number_of_free_slots() == 0);
  advance(10s);
  te2 = spawn_task_executor("task_executor/tm-2", 2);
  run();
  CHECK(executor().number_of_running_tasks()
          + deref<task_executor::task_executor>(te2).number_of_running_tasks()
        == 6);
  CHECK(results.empty());
}

TEST_CASE_FIXTURE(cluster_fixture, "a task executor that dies fails the job, naming it") {
  blocking_tasks = true;
  submit(test::chain_job(job, {2, 2}));
  REQUIRE(executor().number_of_running_tasks() == 4);
  caf::anon_send_exit(te, caf::exit_reason::kill);
  te = caf::actor{};
  for (int i = 0; i < 6 && results.empty(); ++i)
    advance(10s);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find(tm_id) != std::string::npos);
}

TEST_CASE_FIXTURE(
  cluster_fixture,
  "slots are free again even when the job master is stopped as soon as the job ends") {
  stop_on_terminal = true;
  submit(test::chain_job(job, {2, 2, 2}));
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::finished);
  CHECK(executor().slot_table().number_of_free_slots() == 2);
  jm = caf::actor{};
}
