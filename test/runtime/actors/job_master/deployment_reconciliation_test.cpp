// Flink's ExecutionDeploymentReconciler between the JobMaster and a TaskExecutor, message by
// message on the test coordinator: a fake TaskExecutor answers each heartbeat request with the
// executions it holds (its deployment report), and the JobMaster fails those it expects there
// and the report lacks, and cancels those it does not know.

#include <doctest/doctest.h>

#include <optional>

#include <caf/all.hpp>

#include "runtime/actors/job_master/job_master.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/slot_pool/slot_pool.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "test/runtime/actors/job_master/test_jobs.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::job_master;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;
using graph::execution_state;
using graph::job_status;

namespace {

const graph::job_id job{0xfeed, 0xbeef};
const cluster::job_master_id jm_token{0x1234, 0x5678};
const std::string jm_id = "job_master/" + job.to_string();
const std::string tm_id = "task_executor/tm-1";

struct rm_contender : leader::leader_contender {
  rpc::fencing_token granted;
  void grant_leadership(const rpc::fencing_token& id) override { granted = id; }
  void revoke_leadership() override { granted = {}; }
  std::string description() const override { return "fake resource manager"; }
};

graph::execution_attempt_id attempt_of(const task_executor::submit_task_request& s) {
  return {s.tdd.execution_graph_id, s.tdd.job_vertex_id, s.tdd.subtask_index, s.tdd.attempt_number};
}

struct job_master_fixture : test_fixture {
  leader::embedded_ha_services ha{7};
  rpc::endpoint_directory directory;
  rm_contender contender;
  std::unique_ptr<leader::leader_election_service> election = ha.resource_manager_election();

  std::vector<resource_manager::request_slot_request> slot_requests;
  std::vector<task_executor::submit_task_request> submitted;
  std::vector<task_executor::cancel_task_request> canceled;
  std::vector<rpc::reply_to<rpc::ack>> parked_submits;
  bool park_submits = false;
  /// The fake TE holds no slot for what it is sent (it freed them).
  bool refuse_submits = false;
  /// When set, the fake TE answers each heartbeat request with these as its deployed executions.
  std::optional<std::vector<graph::execution_attempt_id>> te_deployed;
  std::vector<job_master_result> results;

  caf::actor rm;
  caf::actor te;
  caf::actor jm;

  job_master_fixture() {
    election->start(contender);
    auto rm_token = contender.granted;
    rm = spawn<fake_endpoint>(context("resource_manager"), [this, rm_token](fake_endpoint& self) {
      self.set_token(rm_token);
      self.on<resource_manager::register_job_manager>(
        rpc::fencing::fenced,
        [rm_token](resource_manager::job_master_registration_request)
          -> expected<resource_manager::job_master_registration_response> {
          return resource_manager::job_master_registration_response{
            resource_manager::job_master_registration_success{rm_token, "resource_manager"}};
        });
      self.on<resource_manager::request_slot>(
        rpc::fencing::fenced,
        [this](resource_manager::request_slot_request r) -> expected<rpc::ack> {
          slot_requests.push_back(r);
          return rpc::ack{};
        });
      auto ack = [](auto) -> expected<rpc::ack> { return rpc::ack{}; };
      self.on<resource_manager::cancel_slot_request>(rpc::fencing::fenced, ack);
      self.on<resource_manager::disconnect_job_manager>(rpc::fencing::fenced, ack);
      self.on<resource_manager::heartbeat_from_job_manager>(rpc::fencing::fenced, ack);
    });
    te = spawn<fake_endpoint>(context(tm_id), [this](fake_endpoint& self) {
      self.set_token(jm_token);
      self.on_async<task_executor::submit_task>(
        rpc::fencing::fenced,
        [this](task_executor::submit_task_request r, rpc::reply_to<rpc::ack> reply) {
          submitted.push_back(r);
          if (refuse_submits) {
            reply(make_error(errc::not_found, "No task slot allocated for job ID "
                                                + r.tdd.job_id.to_string() + " and allocation ID "
                                                + r.allocation_id.to_string() + "."));
            return;
          }
          if (park_submits)
            parked_submits.push_back(std::move(reply));
          else
            reply(rpc::ack{});
        });
      self.on<task_executor::cancel_task>(
        rpc::fencing::fenced, [this](task_executor::cancel_task_request r) -> expected<rpc::ack> {
          canceled.push_back(r);
          return rpc::ack{};
        });
      auto ack = [](auto) -> expected<rpc::ack> { return rpc::ack{}; };
      self.on<task_executor::free_slot>(rpc::fencing::fenced, ack);
      self.on<task_executor::trigger_checkpoint>(rpc::fencing::fenced, ack);
      self.on<task_executor::confirm_checkpoint>(rpc::fencing::fenced, ack);
      self.on<task_executor::abort_checkpoint>(rpc::fencing::fenced, ack);
      self.on<task_executor::disconnect_job_manager>(rpc::fencing::fenced, ack);
      self.on<task_executor::heartbeat_from_job_manager>(
        rpc::fencing::fenced, [this, &self](heartbeat::heartbeat_request) -> expected<rpc::ack> {
          if (te_deployed) {
            task_io_report report;
            report.deployed_executions = *te_deployed;
            report.reports_deployments = true;
            rpc::gateway(jm, jm_id, jm_token)
              .tell<heartbeat_from_task_manager>(
                self, {tm_id, rpc::codec<task_io_report>::encode(report)});
          }
          return rpc::ack{};
        });
    });
    run();
  }

  ~job_master_fixture() {
    for (auto* a : {&jm, &te, &rm})
      if (*a)
        caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    run();
    sched.clock().cancel_all();
    run();
  }

  void confirm_resource_manager() {
    election->confirm_leadership(contender.granted,
                                 leader::leader_address{"resource_manager", rm, {}, 0});
    run();
  }

  void start_job_master(graph::job_graph g, job_master_config cfg = {}) {
    job_master_services services{
      &ha, &directory, [this](job_master_result r) { results.push_back(std::move(r)); }};
    jm = spawn<job_master::job_master>(context(jm_id), std::move(g), jm_token, cfg, services);
    run();
  }

  job_master::job_master& master() { return deref<job_master::job_master>(jm); }

  template <class M>
  expected<typename M::response> te_call(const typename M::request& req) {
    std::optional<expected<typename M::response>> out;
    rpc::gateway gw(jm, jm_id, jm_token);
    in_main_thread<fake_endpoint>(te, [gw, req, &out](fake_endpoint& self) {
      gw.ask<M>(self, req, [&out](expected<typename M::response> r) { out = std::move(r); });
    });
    run();
    REQUIRE(out.has_value());
    return std::move(*out);
  }

  void register_and_offer() {
    auto reg = te_call<register_task_manager>({tm_id, {tm_id, "localhost", 0}});
    REQUIRE(reg.has_value());
    REQUIRE(std::holds_alternative<task_manager_registration_success>(*reg));
    std::vector<cluster::slot_offer> offers;
    for (std::size_t i = 0; i < slot_requests.size(); ++i)
      offers.push_back(cluster::slot_offer{
        slot_requests[i].request.allocation_id, static_cast<std::int32_t>(i), {}});
    auto accepted = te_call<offer_slots>({tm_id, offers});
    REQUIRE(accepted.has_value());
    REQUIRE(accepted->accepted.size() == offers.size());
  }

  /// Brings a 3 x 2 job to RUNNING on one TaskExecutor with two slots; `checkpoint_interval`
  /// > 0 makes it checkpoint.
  void run_job(job_master_config cfg = {}, std::int64_t checkpoint_interval = -1) {
    confirm_resource_manager();
    auto g = test::chain_job(job, {2, 2, 2});
    g.checkpointing.interval = checkpoint_interval;
    start_job_master(std::move(g), std::move(cfg));
    register_and_offer();
    REQUIRE(submitted.size() == 6);
    for (auto& s : submitted)
      REQUIRE(te_call<update_task_execution_state>(
        cluster::task_execution_state{job, attempt_of(s), execution_state::running, {}}));
    REQUIRE(master().status() == job_status::running);
  }
};

} // namespace

TEST_CASE_FIXTURE(job_master_fixture,
                  "a task executor that lost a task the job master counts as RUNNING makes it "
                  "FAILED within a heartbeat, and the job restarts under its strategy") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "2");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "500 ms");
  run_job(cfg);
  std::vector<graph::execution_attempt_id> held;
  for (const auto& s : submitted)
    held.push_back(attempt_of(s));
  te_deployed = held;
  advance(10s); // a heartbeat listing all six: nothing to reconcile
  CHECK(canceled.empty());
  CHECK(master().status() == job_status::running);
  // The TaskExecutor lost Map (1/2) without a word to the JobMaster (its connection was closed
  // when it failed the task); the next heartbeat no longer lists it.
  auto lost = held[2];
  held.erase(held.begin() + 2);
  te_deployed = held;
  advance(9s);
  CHECK(master().status() == job_status::running);
  advance(1s);
  auto v = master().job_scheduler()->vertex_of(lost);
  REQUIRE(v.has_value());
  CHECK(master().job_scheduler()->graph().vertices()[*v].current_execution.state()
        == execution_state::failed);
  CHECK(master().status() == job_status::restarting);
  CHECK(canceled.size() == 5); // the rest of its region, for the restart
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  REQUIRE(status->failures.size() == 1);
  CHECK(status->failures[0].cause
        == "Execution " + lost.to_string() + " is unexpectedly no longer running on task executor "
             + tm_id + ".");
  te_deployed.reset();
  for (auto& c : canceled)
    REQUIRE(te_call<update_task_execution_state>(
      cluster::task_execution_state{job, c.attempt, execution_state::canceled, {}}));
  submitted.clear();
  advance(500ms);
  CHECK(master().status() == job_status::running);
  REQUIRE(submitted.size() == 6);
  for (auto& s : submitted)
    CHECK(s.tdd.attempt_number == 1);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "an execution whose submission is not yet acknowledged is not missing") {
  park_submits = true;
  job_master_config cfg;
  cfg.heartbeat.interval = 1s;
  cfg.heartbeat.timeout = 5s;
  confirm_resource_manager();
  start_job_master(test::chain_job(job, {1}), cfg);
  register_and_offer();
  REQUIRE(submitted.size() == 1);
  // The heartbeat crosses the submission: the TaskExecutor does not hold it yet.
  te_deployed = std::vector<graph::execution_attempt_id>{};
  advance(1s);
  const auto& vertex = master().job_scheduler()->graph().vertices()[0];
  CHECK(vertex.current_execution.state() == execution_state::deploying);
  in_main_thread<fake_endpoint>(te, [this](fake_endpoint&) { parked_submits[0](rpc::ack{}); });
  run();
  te_deployed = std::vector<graph::execution_attempt_id>{attempt_of(submitted[0])};
  advance(1s);
  CHECK(vertex.current_execution.state() == execution_state::deploying);
  // Acknowledged, then gone from the report: missing.
  te_deployed = std::vector<graph::execution_attempt_id>{};
  advance(1s);
  CHECK(master().job_scheduler()->graph().vertices()[0].current_execution.state()
        == execution_state::failed);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "an execution a task executor runs that the job master does not know is "
                  "cancelled there") {
  run_job();
  std::vector<graph::execution_attempt_id> held;
  for (const auto& s : submitted)
    held.push_back(attempt_of(s));
  // An attempt of an earlier leadership or restart, still running at the TaskExecutor.
  graph::execution_attempt_id stale = held[0];
  stale.attempt_number = 7;
  held.push_back(stale);
  te_deployed = held;
  advance(10s);
  REQUIRE(canceled.size() == 1);
  CHECK(canceled[0].attempt == stale);
  CHECK(canceled[0].job_id == job);
  CHECK(master().status() == job_status::running);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a checkpoint whose participant went missing is aborted within the heartbeat, "
                  "not at its timeout") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "2");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "500 ms");
  cfg.heartbeat.interval = 1s;
  cfg.heartbeat.timeout = 5s;
  run_job(cfg, 100);
  std::vector<graph::execution_attempt_id> held;
  for (const auto& s : submitted)
    held.push_back(attempt_of(s));
  advance(100ms); // checkpoint 1 is triggered at the sources; nobody acknowledges it
  REQUIRE(master().checkpoint_coordinator()->stats().in_progress == 1);
  held.erase(held.begin()); // a source the TaskExecutor lost
  te_deployed = held;
  advance(900ms);
  const auto stats = master().checkpoint_coordinator()->stats();
  CHECK(stats.in_progress == 0);
  CHECK(stats.failed == 1);
  CHECK(master().status() == job_status::restarting);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a submission refused because the slot is gone at the TaskExecutor fails the "
                  "slot, and the restart asks for new ones instead of picking it again") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "2");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "0 ms");
  refuse_submits = true;
  confirm_resource_manager();
  start_job_master(test::chain_job(job, {1}), cfg);
  REQUIRE(slot_requests.size() == 1);
  register_and_offer();
  REQUIRE(submitted.size() == 1);
  advance(1ms); // the restart delay (0 ms) is a timer
  // The dead slot left the pool: the restart waits for a new one from the ResourceManager.
  CHECK(submitted.size() == 1);
  CHECK(slot_requests.size() == 2);
  CHECK(master().status() == job_status::running);
  CHECK(results.empty());
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a restarted execution waiting for its slot is not missing where its "
                  "predecessor ran") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "3");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "0 ms");
  cfg.heartbeat.interval = 1s;
  cfg.heartbeat.timeout = 5s;
  run_job(cfg);
  REQUIRE(slot_requests.size() == 2);
  // One slot dies: its tasks fail, the region restarts and waits for a new slot from the
  // ResourceManager (which never offers one here).
  REQUIRE(te_call<fail_slot>({tm_id, slot_requests[0].request.allocation_id, "slot lost"}));
  for (std::size_t i = 0; i < canceled.size(); ++i)
    REQUIRE(te_call<update_task_execution_state>(
      cluster::task_execution_state{job, canceled[i].attempt, execution_state::canceled, {}}));
  advance(1ms);
  REQUIRE(slot_requests.size() == 3);
  for (const auto& v : master().job_scheduler()->graph().vertices())
    REQUIRE(v.current_execution.state() == execution_state::scheduled);
  te_deployed = std::vector<graph::execution_attempt_id>{}; // the TaskExecutor holds nothing now
  advance(1s);
  for (const auto& v : master().job_scheduler()->graph().vertices())
    CHECK(v.current_execution.state() == execution_state::scheduled);
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->restarts == 1);
}
