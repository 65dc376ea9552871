// The JobMaster endpoint with its SlotPool, message by message on the test coordinator: a fake
// ResourceManager (found through embedded leader retrieval) and a fake TaskExecutor built from
// lambdas record what the JobMaster sends them and answer as each test scripts.

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>

#include <unistd.h>

#include <caf/all.hpp>

#include "runtime/actors/job_master/failover_settings.hpp"
#include "runtime/actors/job_master/job_master.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/slot_pool/slot_pool.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/ha/completed_checkpoint_store.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/state/checkpoint_storage.hpp"
#include "test/runtime/actors/job_master/test_jobs.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::job_master;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;
using graph::execution_state;
using graph::job_status;
using trace::direction;

namespace {

const graph::job_id job{0xfeed, 0xbeef};
const cluster::job_master_id jm_token{0x1234, 0x5678};
const std::string jm_id = "job_master/" + job.to_string();
const std::string tm_id = "task_executor/tm-1";

/// The attempt a submitted task runs as (what its TaskExecutor reports it by).
graph::execution_attempt_id attempt_of(const task_executor::submit_task_request& s) {
  return {s.tdd.execution_graph_id, s.tdd.job_vertex_id, s.tdd.subtask_index, s.tdd.attempt_number};
}

/// Takes the ResourceManager leadership for the fake RM and confirms it with the fake's handle.
struct rm_contender : leader::leader_contender {
  rpc::fencing_token granted;
  void grant_leadership(const rpc::fencing_token& id) override { granted = id; }
  void revoke_leadership() override { granted = {}; }
  std::string description() const override { return "fake resource manager"; }
};

struct job_master_fixture : test_fixture {
  leader::embedded_ha_services ha{7};
  rpc::endpoint_directory directory;
  rm_contender contender;
  std::unique_ptr<leader::leader_election_service> election = ha.resource_manager_election();

  // What the fakes saw.
  std::vector<resource_manager::job_master_registration_request> registrations;
  std::vector<resource_manager::request_slot_request> slot_requests;
  std::vector<task_executor::submit_task_request> submitted;
  std::vector<task_executor::cancel_task_request> canceled;
  std::vector<task_executor::free_slot_request> freed;
  std::vector<task_executor::disconnect_job_manager_request> te_disconnects;
  std::vector<resource_manager::disconnect_job_manager_request> rm_disconnects;
  std::vector<rpc::reply_to<rpc::ack>> parked_submits;
  std::vector<task_executor::trigger_checkpoint_request> checkpoint_triggers;
  std::vector<task_executor::checkpoint_notification> checkpoint_confirms;
  std::vector<task_executor::checkpoint_notification> checkpoint_aborts;
  bool park_submits = false;
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
        [this, rm_token](resource_manager::job_master_registration_request r)
          -> expected<resource_manager::job_master_registration_response> {
          registrations.push_back(r);
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
      self.on<resource_manager::disconnect_job_manager>(
        rpc::fencing::fenced,
        [this](resource_manager::disconnect_job_manager_request r) -> expected<rpc::ack> {
          rm_disconnects.push_back(r);
          return rpc::ack{};
        });
      self.on<resource_manager::heartbeat_from_job_manager>(rpc::fencing::fenced, ack);
    });
    te = spawn<fake_endpoint>(context(tm_id), [this](fake_endpoint& self) {
      self.set_token(jm_token);
      self.on_async<task_executor::submit_task>(
        rpc::fencing::fenced,
        [this](task_executor::submit_task_request r, rpc::reply_to<rpc::ack> reply) {
          submitted.push_back(r);
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
      self.on<task_executor::free_slot>(
        rpc::fencing::fenced, [this](task_executor::free_slot_request r) -> expected<rpc::ack> {
          freed.push_back(r);
          return rpc::ack{};
        });
      self.on<task_executor::disconnect_job_manager>(
        rpc::fencing::fenced,
        [this](task_executor::disconnect_job_manager_request r) -> expected<rpc::ack> {
          te_disconnects.push_back(r);
          return rpc::ack{};
        });
      self.on<task_executor::heartbeat_from_job_manager>(
        rpc::fencing::fenced,
        [](heartbeat::heartbeat_request) -> expected<rpc::ack> { return rpc::ack{}; });
      self.on<task_executor::trigger_checkpoint>(
        rpc::fencing::fenced,
        [this](task_executor::trigger_checkpoint_request r) -> expected<rpc::ack> {
          checkpoint_triggers.push_back(r);
          return rpc::ack{};
        });
      self.on<task_executor::confirm_checkpoint>(
        rpc::fencing::fenced,
        [this](task_executor::checkpoint_notification n) -> expected<rpc::ack> {
          checkpoint_confirms.push_back(n);
          return rpc::ack{};
        });
      self.on<task_executor::abort_checkpoint>(
        rpc::fencing::fenced,
        [this](task_executor::checkpoint_notification n) -> expected<rpc::ack> {
          checkpoint_aborts.push_back(n);
          return rpc::ack{};
        });
    });
    run();
  }

  void confirm_resource_manager() {
    election->confirm_leadership(contender.granted,
                                 leader::leader_address{"resource_manager", rm, {}, 0});
    run();
  }

  /// `stores`: the HA stores a JobMaster recovers from (null: none).
  void start_job_master(graph::job_graph g = test::chain_job(job, {2, 2, 2}),
                        job_master_config cfg = {}, ha::ha_stores* stores = nullptr) {
    job_master_services services{
      &ha, &directory, [this](job_master_result r) { results.push_back(std::move(r)); }, nullptr,
      stores};
    jm = spawn<job_master::job_master>(context(jm_id), std::move(g), jm_token, cfg, services);
    run();
  }

  job_master::job_master& master() { return deref<job_master::job_master>(jm); }

  /// The endpoints stop while the leader services and the directory they use still exist.
  ~job_master_fixture() {
    for (auto* a : {&jm, &te, &rm})
      if (*a)
        caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    run();
    sched.clock().cancel_all();
    run();
  }
  const slot_pool::slot_pool_state& pool() {
    return deref<slot_pool::slot_pool>(master().slot_pool_actor()).state();
  }

  /// Calls the JobMaster from the fake TaskExecutor's main thread (so it is the caller).
  template <class M>
  expected<typename M::response> te_call(const typename M::request& req,
                                         cluster::job_master_id token = jm_token) {
    std::optional<expected<typename M::response>> out;
    rpc::gateway gw(jm, jm_id, token);
    in_main_thread<fake_endpoint>(te, [gw, req, &out](fake_endpoint& self) {
      gw.ask<M>(self, req, [&out](expected<typename M::response> r) { out = std::move(r); });
    });
    run();
    REQUIRE(out.has_value());
    return std::move(*out);
  }

  cluster::task_manager_location location() const { return {tm_id, "localhost", 0}; }

  /// The TE registers and offers the slots the RM asked it for (slot i for request i).
  void register_and_offer() {
    auto reg = te_call<register_task_manager>({tm_id, location()});
    REQUIRE(reg.has_value());
    REQUIRE(std::holds_alternative<task_manager_registration_success>(*reg));
    std::vector<cluster::slot_offer> offers;
    for (std::size_t i = 0; i < slot_requests.size(); ++i)
      offers.push_back(cluster::slot_offer{
        slot_requests[i].request.allocation_id, static_cast<std::int32_t>(i), {}});
    auto accepted = te_call<offer_slots>({tm_id, offers});
    REQUIRE(accepted.has_value());
    CHECK(accepted->accepted.size() == offers.size());
  }

  void report_all(execution_state state) {
    for (auto& s : submitted) {
      cluster::task_execution_state tes{job, attempt_of(s), state, {}};
      auto r = te_call<update_task_execution_state>(tes);
      REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    }
  }

  std::vector<std::string> submitted_names() const {
    std::vector<std::string> names;
    for (auto& s : submitted)
      names.push_back(s.tdd.task_name);
    return names;
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
    report_all(execution_state::running);
    REQUIRE(master().status() == job_status::running);
  }
};

} // namespace

TEST_CASE_FIXTURE(
  job_master_fixture,
  "a job runs: JM registers at the RM, slots are requested, offered, deployed in order and the job finishes") {
  confirm_resource_manager();
  start_job_master();
  REQUIRE(registrations.size() == 1);
  CHECK(registrations[0].job_master_id == jm_token);
  CHECK(registrations[0].job_id == job);
  CHECK(registrations[0].job_master_address == jm_id);
  CHECK(master().connected_to_resource_manager());
  // Slot sharing: two physical slots for three vertices at parallelism 2.
  REQUIRE(slot_requests.size() == 2);
  CHECK(slot_requests[0].job_master_id == jm_token);
  CHECK(slot_requests[0].request.target_address == jm_id);
  CHECK(master().status() == job_status::running);
  CHECK(submitted.empty());

  register_and_offer();
  CHECK(master().is_registered_task_manager(tm_id));
  REQUIRE(submitted.size() == 6);
  CHECK(submitted_names()
        == std::vector<std::string>{"Source: numbers (1/2)", "Source: numbers (2/2)", "Map (1/2)",
                                    "Map (2/2)", "Sink: collect (1/2)", "Sink: collect (2/2)"});
  CHECK(submitted[0].job_master_id == jm_token);
  CHECK(submitted[0].allocation_id == slot_requests[0].request.allocation_id);
  CHECK(submitted[1].allocation_id == slot_requests[1].request.allocation_id);
  CHECK(submitted[2].allocation_id == slot_requests[0].request.allocation_id);

  report_all(execution_state::running);
  CHECK(results.empty());
  report_all(execution_state::finished);
  CHECK(master().status() == job_status::finished);
  REQUIRE(results.size() == 1);
  CHECK(results[0].job == job);
  CHECK(results[0].status == job_status::finished);
  CHECK(results[0].failure_cause.empty());
  CHECK(results[0].failures.empty());
  CHECK(results[0].restarts == 0);
  // The archive keeps the graph's plan and its vertices as they ended.
  CHECK(results[0].plan.find(job.to_string()) != std::string::npos);
  REQUIRE(results[0].vertices.size() == 3);
  for (const auto& v : results[0].vertices)
    for (const auto& t : v.subtasks)
      CHECK(t.status == execution_state::finished);
  // Both slots are freed at the TaskExecutor once the job is over.
  CHECK(freed.size() == 2);

  CHECK(flint::test::contains_in_order(trace(),
                                       {{direction::receive, "allocate_slot"},
                                        {direction::receive, "register_job_manager"},
                                        {direction::receive, "connect_to_resource_manager"},
                                        {direction::receive, "request_slot"},
                                        {direction::receive, "register_task_manager"},
                                        {direction::receive, "offer_slots"},
                                        {direction::receive, "submit_task"},
                                        {direction::receive, "update_task_execution_state"},
                                        {direction::receive, "free_slot"}}));
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->status == job_status::finished);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "every deployed task names the job's package and library by their SHA-256") {
  confirm_resource_manager();
  auto g = test::chain_job(job, {2, 2, 2});
  // As `flint run` sets them (api::upload_job): the TaskExecutor loads no other code.
  g.code.package = std::string(64, 'a');
  g.code.library = std::string(64, 'b');
  start_job_master(g);
  register_and_offer();
  REQUIRE(submitted.size() == 6);
  for (const auto& s : submitted) {
    CHECK(s.tdd.code.package == std::string(64, 'a'));
    CHECK(s.tdd.code.library == std::string(64, 'b'));
  }
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "slots are requested from the leading resource manager, not from this process's standby of the same name") {
  // Two JobManager processes: this one's ResourceManager lost the election and stays filed under
  // the shared endpoint id; the leader lives in the other process.
  std::vector<resource_manager::request_slot_request> standby_requests;
  // It accepts the leader's token so that a request sent to it would be seen, not refused.
  auto standby = spawn<fake_endpoint>(context("resource_manager"), [&](fake_endpoint& self) {
    self.set_token(contender.granted);
    self.on<resource_manager::request_slot>(
      rpc::fencing::fenced, [&](resource_manager::request_slot_request r) -> expected<rpc::ack> {
        standby_requests.push_back(r);
        return rpc::ack{};
      });
  });
  run();
  directory.put("resource_manager", standby);
  election->confirm_leadership(contender.granted,
                               leader::leader_address{"resource_manager", rm, "10.0.0.2", 6123});
  run();
  start_job_master();
  CHECK(registrations.size() == 1);
  CHECK(slot_requests.size() == 2);
  CHECK(standby_requests.empty());
  CHECK(pool().waiting_for_resource_manager_count() == 0);
  CHECK(directory.lookup("resource_manager") == standby);
  caf::anon_send_exit(standby, caf::exit_reason::user_shutdown);
  run();
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "slot requests made before any resource manager is known wait and are sent once one is") {
  start_job_master();
  CHECK(registrations.empty());
  CHECK(slot_requests.empty());
  CHECK(pool().waiting_for_resource_manager_count() == 2);
  confirm_resource_manager();
  CHECK(registrations.size() == 1);
  CHECK(slot_requests.size() == 2);
  CHECK(pool().waiting_for_resource_manager_count() == 0);
  register_and_offer();
  CHECK(submitted.size() == 6);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "cancel while running ends CANCELED with every slot released") {
  run_job();
  auto ack = te_call<flint::job_master::cancel>(rpc::ack{});
  REQUIRE(ack.has_value());
  CHECK(master().status() == job_status::cancelling);
  CHECK(canceled.size() == 6);
  report_all(execution_state::canceled);
  CHECK(master().status() == job_status::canceled);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::canceled);
  CHECK(freed.size() == 2);
  CHECK(pool().allocated_count() == 0);
  CHECK(pool().available_count() == 0);
}

TEST_CASE_FIXTURE(job_master_fixture, "a task executor that disconnects fails the job, naming it") {
  run_job();
  auto ack =
    te_call<flint::job_master::disconnect_task_manager>({tm_id, "TaskExecutor is shutting down."});
  REQUIRE(ack.has_value());
  CHECK(master().status() == job_status::failed);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find(tm_id) != std::string::npos);
  CHECK(results[0].failure_cause.find("TaskExecutor is shutting down.") != std::string::npos);
  CHECK(!master().is_registered_task_manager(tm_id));
  CHECK(te_disconnects.size() == 1);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a task executor whose heartbeats stop fails the job after heartbeat.timeout") {
  run_job();
  // The fake TE confirms heartbeat requests but never answers them.
  for (int i = 0; i < 5; ++i)
    advance(10s);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("Heartbeat of TaskManager with id " + tm_id + " timed out.")
        != std::string::npos);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "a deployment the task executor never confirms fails its execution after the rpc timeout") {
  park_submits = true;
  confirm_resource_manager();
  start_job_master(test::chain_job(job, {1}));
  register_and_offer();
  REQUIRE(submitted.size() == 1);
  const auto& vertex = master().job_scheduler()->graph().vertices()[0];
  CHECK(vertex.current_execution.state() == execution_state::deploying);
  advance(9s);
  CHECK(vertex.current_execution.state() == execution_state::deploying);
  advance(1s);
  CHECK(master().job_scheduler()->graph().vertices()[0].current_execution.state()
        == execution_state::failed);
  CHECK(master().status() == job_status::failed);
  REQUIRE(results.size() == 1);
  CHECK(results[0].failure_cause.find("not responding after a rpcTimeout of 10000 ms")
        != std::string::npos);
}

TEST_CASE_FIXTURE(job_master_fixture, "a call carrying an old JobMasterId is refused") {
  confirm_resource_manager();
  start_job_master();
  cluster::job_master_id old_token{0x1, 0x1};
  auto refused = te_call<register_task_manager>({tm_id, location()}, old_token);
  REQUIRE(!refused.has_value());
  CHECK(refused.error().code == errc::fencing_token_mismatch);
  CHECK(!master().is_registered_task_manager(tm_id));
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a job graph that cannot be built fails the job with a clear cause") {
  confirm_resource_manager();
  auto bad = test::chain_job(job, {1, 1});
  bad.vertices[1].inputs.push_back(42);
  start_job_master(bad);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("invalid job graph") != std::string::npos);
  CHECK(registrations.empty());
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->status == job_status::failed);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a job that needs more slots than ever come fails after slot.request.timeout") {
  confirm_resource_manager();
  start_job_master();
  REQUIRE(slot_requests.size() == 2);
  for (int i = 0; i < 29; ++i)
    advance(10s);
  CHECK(results.empty());
  // Nobody offers anything: the requests time out and the job fails with the pool's reason.
  advance(10s);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("slot request timeout of 300000 ms") != std::string::npos);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "a disconnect from the resource manager makes the job master register again and resend its requests") {
  confirm_resource_manager();
  start_job_master();
  REQUIRE(registrations.size() == 1);
  REQUIRE(slot_requests.size() == 2);
  auto ack =
    te_call<flint::job_master::disconnect_resource_manager>({contender.granted, "RM restarted"});
  REQUIRE(ack.has_value());
  CHECK(registrations.size() == 2);
  REQUIRE(slot_requests.size() == 4);
  CHECK(slot_requests[2].request.allocation_id == slot_requests[0].request.allocation_id);
  CHECK(slot_requests[3].request.allocation_id == slot_requests[1].request.allocation_id);
  // The job goes on: the offers of the two allocations still match.
  slot_requests.resize(2);
  register_and_offer();
  CHECK(submitted.size() == 6);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "an allocation the resource manager reports as failed fails the job with its cause") {
  confirm_resource_manager();
  start_job_master();
  REQUIRE(slot_requests.size() == 2);
  auto ack = te_call<fail_slot>(
    {"", slot_requests[0].request.allocation_id, "TaskExecutor refused the slot"});
  REQUIRE(ack.has_value());
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("TaskExecutor refused the slot") != std::string::npos);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "a job master stopped while its job runs tells its task executors and the resource manager") {
  run_job();
  caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
  jm = caf::actor{};
  run();
  REQUIRE(te_disconnects.size() == 1);
  CHECK(te_disconnects[0].job_id == job);
  CHECK(te_disconnects[0].cause.find("is stopping") != std::string::npos);
  REQUIRE(rm_disconnects.size() == 1);
  CHECK(rm_disconnects[0].job_id == job);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "under fixed-delay a failed task's region is cancelled and deployed again as attempt #1 after the delay") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "2");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "500 ms");
  run_job(cfg);
  const auto first = submitted;
  auto failed = first[2]; // Map (1/2)
  auto r = te_call<update_task_execution_state>(
    cluster::task_execution_state{job, attempt_of(failed), execution_state::failed, "boom"});
  REQUIRE(r.has_value());
  CHECK(master().status() == job_status::restarting);
  REQUIRE(canceled.size() == 5);
  submitted.clear();
  for (auto& c : canceled) {
    auto ack = te_call<update_task_execution_state>(
      cluster::task_execution_state{job, c.attempt, execution_state::canceled, {}});
    REQUIRE(ack.has_value());
  }
  // The slots went back to the pool, not to the TaskExecutor: the restart reuses them.
  CHECK(freed.empty());
  advance(499ms);
  CHECK(submitted.empty());
  CHECK(master().status() == job_status::restarting);
  advance(1ms);
  CHECK(master().status() == job_status::running);
  REQUIRE(submitted.size() == 6);
  for (auto& s : submitted)
    CHECK(s.tdd.attempt_number == 1);
  CHECK(slot_requests.size() == 2); // no new slots were asked of the ResourceManager
  report_all(execution_state::running);
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->status == job_status::running);
  CHECK(status->restarts == 1);
  REQUIRE(status->failures.size() == 1);
  CHECK(status->failures[0].task == "Map (1/2)");
  CHECK(status->failures[0].cause == "boom");
  CHECK(status->failures[0].location.find(tm_id) != std::string::npos);
  CHECK(status->tasks == 6);
  CHECK(status->tasks_running == 6);
  report_all(execution_state::finished);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::finished);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "a task executor whose actor goes away is disconnected at once, not at the heartbeat timeout") {
  run_job();
  caf::anon_send_exit(te, caf::exit_reason::kill);
  te = caf::actor{};
  run();
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("TaskManager with id " + tm_id + " is no longer reachable.")
        != std::string::npos);
  CHECK(!master().is_registered_task_manager(tm_id));
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a job whose restart strategy is unknown fails at its start naming the key") {
  confirm_resource_manager();
  auto bad = test::chain_job(job, {1});
  bad.execution_config.job_configuration["restart-strategy.type"] = "sometimes";
  start_job_master(bad);
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("restart-strategy.type") != std::string::npos);
  CHECK(slot_requests.empty());
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a waiting job's status names its pending slot requests and their age") {
  confirm_resource_manager();
  start_job_master();
  advance(3s);
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->status == job_status::running);
  CHECK(status->tasks == 6);
  CHECK(status->tasks_running == 0);
  CHECK(status->slots_needed == 2);
  CHECK(status->slots_assigned == 0);
  REQUIRE(status->pending_slot_requests.size() == 2);
  CHECK(status->pending_slot_requests[0].age_ms >= 3000);
  CHECK(status->registered_task_managers == 0);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "checkpoint acknowledgements and declines are answered while no coordinator runs") {
  // The job of the fixture does not checkpoint.
  run_job();
  graph::execution_attempt_id attempt{{}, graph::job_vertex_id{0, 1}, 0, 0};
  auto ack = te_call<flint::job_master::acknowledge_checkpoint>({job, attempt, 1, {}});
  CHECK(ack.has_value());
  auto decline = te_call<flint::job_master::decline_checkpoint>({job, attempt, 1, "no"});
  CHECK(decline.has_value());
  // Fenced as every JobMaster method: a stale JobMasterId is refused.
  auto stale = te_call<flint::job_master::acknowledge_checkpoint>({job, attempt, 1, {}},
                                                                  cluster::job_master_id{5, 5});
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().code == errc::fencing_token_mismatch);
  CHECK(master().status() == job_status::running);
}

// -- checkpoints ---------------------------------------------------------------------------------

namespace {

/// A checkpoint directory of the test's own, removed at the end.
struct checkpoint_dir {
  std::filesystem::path path =
    std::filesystem::temp_directory_path() / ("flint_jm_checkpoints_" + std::to_string(::getpid()));
  checkpoint_dir() { std::filesystem::remove_all(path); }
  ~checkpoint_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

} // namespace

TEST_CASE_FIXTURE(job_master_fixture,
                  "the JobMaster drives a checkpoint message by message: trigger at the sources, "
                  "acknowledgements with state, _metadata, confirmation to every task") {
  checkpoint_dir dir;
  job_master_config cfg;
  cfg.configuration.set("state.checkpoints.dir", dir.path.string());
  run_job(cfg, 100);
  // Every task learns that the job checkpoints, and where.
  for (const auto& s : submitted) {
    CHECK(s.tdd.checkpointing.mode == graph::checkpointing_mode::exactly_once);
    CHECK(s.tdd.checkpointing.storage_dir == (dir.path / job.to_string()).string());
    CHECK_FALSE(s.tdd.restore.has_value());
  }
  REQUIRE(master().checkpoint_coordinator() != nullptr);
  advance(100ms);
  // Only the two sources are triggered.
  REQUIRE(checkpoint_triggers.size() == 2);
  for (const auto& t : checkpoint_triggers) {
    CHECK(t.checkpoint_id == 1);
    CHECK(t.attempt.job_vertex == submitted[0].tdd.job_vertex_id);
    CHECK_FALSE(t.stop);
  }
  CHECK(test::contains_in_order(trace(), {{direction::send, "trigger_checkpoint"}}));
  // Five of six acknowledge: nothing completes yet.
  for (std::size_t i = 0; i + 1 < submitted.size(); ++i) {
    state::task_state_snapshot snapshot;
    REQUIRE(te_call<acknowledge_checkpoint>({job, attempt_of(submitted[i]), 1, snapshot}));
  }
  CHECK(checkpoint_confirms.empty());
  CHECK(master().checkpoint_coordinator()->stats().in_progress == 1);
  REQUIRE(te_call<acknowledge_checkpoint>({job, attempt_of(submitted.back()), 1, {}}));
  CHECK(master().checkpoint_coordinator()->stats().completed == 1);
  CHECK(std::filesystem::is_regular_file(dir.path / job.to_string() / "chk-1" / "_metadata"));
  // Every task hears of the completion (its sinks commit).
  CHECK(checkpoint_confirms.size() == 6);
  for (const auto& n : checkpoint_confirms)
    CHECK(n.checkpoint_id == 1);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "every task's descriptor carries the job's state.backend.rocksdb.* keys, the "
                  "job's own over the cluster's") {
  job_master_config cfg;
  cfg.configuration.set("state.backend.rocksdb.writebuffer.size", "32 mb");
  cfg.configuration.set("state.backend.rocksdb.block.cache-size", "16 mb");
  cfg.configuration.set("taskmanager.numberOfTaskSlots", "2"); // not a backend key: stays home
  auto g = test::chain_job(job, {2, 2, 2});
  g.checkpointing.interval = 100;
  g.execution_config.job_configuration["state.backend.type"] = "rocksdb";
  g.execution_config.job_configuration["state.backend.rocksdb.writebuffer.size"] = "3 mb";
  g.execution_config.job_configuration["state.backend.rocksdb.cache.size"] = "0";
  confirm_resource_manager();
  start_job_master(std::move(g), std::move(cfg));
  register_and_offer();
  REQUIRE(submitted.size() == 6);
  const std::map<std::string, std::string> expected{
    {"state.backend.rocksdb.block.cache-size", "16 mb"},
    {"state.backend.rocksdb.cache.size", "0"},
    {"state.backend.rocksdb.writebuffer.size", "3 mb"}};
  for (const auto& s : submitted) {
    CHECK(s.tdd.checkpointing.state_backend == "rocksdb");
    CHECK(s.tdd.checkpointing.state_backend_configuration == expected);
  }
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a job whose state.backend.rocksdb.* value does not parse fails before it "
                  "starts, naming the key") {
  auto g = test::chain_job(job, {2, 2, 2});
  g.checkpointing.interval = 100;
  g.execution_config.job_configuration["state.backend.rocksdb.writebuffer.size"] = "lots";
  confirm_resource_manager();
  start_job_master(std::move(g), {});
  CHECK(submitted.empty());
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == job_status::failed);
  CHECK(results[0].failure_cause.find("state.backend.rocksdb.writebuffer.size")
        != std::string::npos);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a declined checkpoint is aborted at every task and counted — a task not ready "
                  "does not count") {
  job_master_config cfg;
  cfg.configuration.set("execution.checkpointing.tolerable-failed-checkpoints", "1");
  run_job(cfg, 100);
  advance(100ms);
  REQUIRE(checkpoint_triggers.size() == 2);
  // Not ready (a task closing): aborted, not counted.
  REQUIRE(te_call<decline_checkpoint>({job, attempt_of(submitted[2]), 1, "closing", true}));
  CHECK(checkpoint_aborts.size() == 6);
  CHECK(master().checkpoint_coordinator()->stats().failed == 1);
  advance(100ms);
  REQUIRE(checkpoint_triggers.size() == 4);
  // A real decline is counted: one is tolerated...
  REQUIRE(te_call<decline_checkpoint>({job, attempt_of(submitted[3]), 2, "state too big", false}));
  CHECK(master().status() == job_status::running);
  advance(100ms);
  REQUIRE(checkpoint_triggers.size() == 6);
  // ...two in a row fail the job.
  REQUIRE(te_call<decline_checkpoint>({job, attempt_of(submitted[3]), 3, "state too big", false}));
  CHECK(master().status() != job_status::running);
}

TEST_CASE_FIXTURE(
  job_master_fixture,
  "after a failover every redeployed task restores the latest completed checkpoint") {
  job_master_config cfg;
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "0 ms");
  run_job(cfg, 100);
  advance(100ms);
  for (const auto& s : submitted)
    REQUIRE(te_call<acknowledge_checkpoint>({job, attempt_of(s), 1, {}}));
  REQUIRE(master().checkpoint_coordinator()->stats().completed == 1);
  advance(50ms);
  auto first = submitted;
  // A task fails: its region (all six, ALL_TO_ALL) restarts, the next checkpoint was aborted.
  cluster::task_execution_state failed{job, attempt_of(first[2]), execution_state::failed, "boom"};
  REQUIRE(te_call<update_task_execution_state>(failed));
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (i == 2)
      continue;
    cluster::task_execution_state canceled{
      job, attempt_of(first[i]), execution_state::canceled, {}};
    REQUIRE(te_call<update_task_execution_state>(canceled));
  }
  advance(1ms); // the restart delay (0 ms) is a timer
  REQUIRE(submitted.size() == 12);
  for (std::size_t i = 6; i < 12; ++i) {
    CHECK(submitted[i].tdd.attempt_number == 1);
    REQUIRE(submitted[i].tdd.restore.has_value());
    CHECK(submitted[i].tdd.restore->checkpoint_id == 1);
  }
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "report_task_io: a task's figures show on its subtask, final ones win over a "
                  "later heartbeat's") {
  confirm_resource_manager();
  start_job_master();
  register_and_offer();
  report_all(execution_state::running);
  const auto& first = submitted[0].tdd;
  graph::execution_attempt_id attempt{first.execution_graph_id, first.job_vertex_id,
                                      first.subtask_index, first.attempt_number};
  flint::job_master::task_io io;
  io.attempt = attempt;
  io.records_out = 41;
  io.back_pressured_ms_per_second = 300;
  REQUIRE(te_call<report_task_io>(task_io_report{{io}, true}).has_value());
  io.records_out = 7; // an older heartbeat's figures, arriving after the final ones
  REQUIRE(te_call<report_task_io>(task_io_report{{io}, false}).has_value());
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  const flint::job_master::subtask_status* shown = nullptr;
  for (const auto& v : status->vertices)
    if (v.id == first.job_vertex_id.to_string())
      shown = &v.subtasks[static_cast<std::size_t>(first.subtask_index)];
  REQUIRE(shown != nullptr);
  CHECK(shown->io_final);
  CHECK(shown->io.records_out == 41);
  CHECK(shown->io.back_pressured_ms_per_second == 300);
  CHECK(shown->status == execution_state::running);
  CHECK(shown->task_manager == tm_id);
  CHECK(flint::test::contains_in_order(trace(),
                                       {{direction::receive, "report_task_io"},
                                        {direction::receive, "report_task_io"},
                                        {direction::receive, "request_job_status"}}));
}

namespace {

/// HA stores whose completed checkpoint store `make_store` makes (what a next leader finds).
class test_stores final : public ha::ha_stores {
public:
  explicit test_stores(std::function<std::unique_ptr<ha::completed_checkpoint_store>()> make_store)
    : standalone_(ha::make_standalone_ha_stores()),
      make_store_(std::move(make_store)) {}
  ha::job_graph_store& job_graphs() override { return standalone_->job_graphs(); }
  ha::job_result_store& job_results() override { return standalone_->job_results(); }
  std::unique_ptr<ha::checkpoint_id_counter> checkpoint_id_counter(
    const graph::job_id& job) override {
    return standalone_->checkpoint_id_counter(job);
  }
  std::unique_ptr<ha::completed_checkpoint_store> completed_checkpoints(
    const graph::job_id&) override {
    return make_store_();
  }

private:
  std::unique_ptr<ha::ha_stores> standalone_;
  std::function<std::unique_ptr<ha::completed_checkpoint_store>()> make_store_;
};

/// A store holding `pointers`.
std::unique_ptr<ha::completed_checkpoint_store> store_of(
  const std::vector<ha::checkpoint_pointer>& pointers) {
  auto store = std::make_unique<ha::standalone_completed_checkpoint_store>();
  for (const auto& p : pointers)
    REQUIRE(store->add(p).has_value());
  return store;
}

/// Checkpoints 1 and 2 of `job` under `dir`, as a leader left them; `latest` is what becomes of
/// chk-2/_metadata.
std::vector<ha::checkpoint_pointer> two_checkpoints(const std::filesystem::path& dir,
                                                    const std::string& latest) {
  auto storage = state::checkpoint_storage::create(dir.string(), job);
  REQUIRE(storage.has_value());
  std::vector<ha::checkpoint_pointer> pointers;
  for (std::int64_t id : {1, 2}) {
    REQUIRE(storage->initialize_checkpoint(id).has_value());
    state::checkpoint_metadata metadata;
    metadata.checkpoint_id = id;
    auto written = storage->write_metadata(metadata);
    REQUIRE(written.has_value());
    pointers.push_back({id, *written});
  }
  if (latest == "corrupt")
    std::ofstream(pointers[1].metadata_path, std::ios::binary | std::ios::trunc) << "not a checkpoint";
  else if (latest == "missing")
    std::filesystem::remove(pointers[1].metadata_path);
  return pointers;
}

} // namespace

TEST_CASE_FIXTURE(job_master_fixture,
                  "recovery never goes back in time: an unreadable latest checkpoint fails the "
                  "recovery and no older one is restored; a missing one falls back") {
  for (const std::string latest : {"corrupt", "missing"}) {
    CAPTURE(latest);
    checkpoint_dir dir;
    auto pointers = two_checkpoints(dir.path, latest);
    test_stores stores([&] { return store_of(pointers); });
    job_master_config cfg;
    cfg.configuration.set("state.checkpoints.dir", dir.path.string());
    // No restarts: the first failed recovery fails the job (with checkpoints, Flink's default
    // strategy would try again for ever).
    cfg.configuration.set("restart-strategy.type", "none");
    confirm_resource_manager();
    auto g = test::chain_job(job, {2, 2, 2});
    g.checkpointing.interval = 100;
    start_job_master(std::move(g), cfg, &stores);
    if (latest == "corrupt") {
      REQUIRE(results.size() == 1);
      CHECK(results[0].status == job_status::failed);
      CHECK(results[0].failure_cause.find("latest checkpoint 2") != std::string::npos);
      CHECK(results[0].failure_cause.find("not restoring an older checkpoint") != std::string::npos);
      CHECK(submitted.empty());
      // Nothing was deleted: both checkpoints are where they were.
      CHECK(std::filesystem::exists(pointers[0].metadata_path));
      CHECK(std::filesystem::file_size(pointers[1].metadata_path) == 16);
    } else {
      register_and_offer();
      REQUIRE(submitted.size() == 6);
      for (const auto& s : submitted) {
        REQUIRE(s.tdd.restore.has_value());
        CHECK(s.tdd.restore->checkpoint_id == 1);
      }
    }
    caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
    run();
    jm = caf::actor{};
    results.clear();
    submitted.clear();
    slot_requests.clear();
  }
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "a late completion notification: no shared state file a checkpoint refers to "
                  "is deleted, and one that refers to a deleted file never completes") {
  checkpoint_dir dir;
  job_master_config cfg;
  cfg.configuration.set("state.checkpoints.dir", dir.path.string());
  confirm_resource_manager();
  auto g = test::chain_job(job, {2, 2, 2});
  g.checkpointing.interval = 100;
  graph::chained_operator keyed_op;
  keyed_op.id = graph::operator_id{0x5e, 0x11};
  keyed_op.name = "Map";
  g.vertices[1].operators.push_back(keyed_op);
  auto keyed_vertex = g.vertices[1].id;
  start_job_master(std::move(g), cfg);
  register_and_offer();
  REQUIRE(submitted.size() == 6);
  report_all(execution_state::running);

  auto shared = dir.path / job.to_string() / "shared";
  std::filesystem::create_directories(shared);
  // A shared file of that name, made unless `make` is false (a snapshot referring to a gone one).
  auto file = [&](const std::string& name, bool make) {
    auto path = (shared / name).string();
    if (make && !std::filesystem::exists(path))
      std::ofstream(path) << name;
    return path;
  };
  // Checkpoint n: the keyed subtask's RocksDB snapshot refers to `files`, reusing what checkpoint
  // `base` held; every other task acknowledges nothing.
  auto checkpoint = [&](std::vector<std::string> files, std::int64_t base, bool make = true) {
    auto before = checkpoint_triggers.size();
    for (int i = 0; i < 20 && checkpoint_triggers.size() == before; ++i)
      advance(100ms);
    REQUIRE(checkpoint_triggers.size() > before);
    auto id = checkpoint_triggers.back().checkpoint_id;
    for (const auto& s : submitted) {
      state::task_state_snapshot snapshot;
      if (s.tdd.job_vertex_id == keyed_vertex && s.tdd.subtask_index == 0) {
        auto& op = snapshot.operators.emplace_back();
        op.operator_id = keyed_op.id;
        auto& handle = op.keyed.emplace_back();
        handle.first_key_group = 0;
        handle.last_key_group = 63;
        handle.incremental = true;
        handle.base_checkpoint_id = base;
        for (const auto& f : files)
          handle.shared_files.push_back({f + ".sst", {file(f, make), 0, 1, {}}});
      }
      REQUIRE(te_call<acknowledge_checkpoint>({job, attempt_of(s), id, snapshot}));
    }
    return id;
  };
  auto exists = [&](const std::string& name) { return std::filesystem::exists(shared / name); };
  auto completed = [&] { return master().checkpoint_coordinator()->stats().completed; };

  checkpoint({"A"}, -1);
  REQUIRE(completed() == 1);
  // Snapshot 2 began before 1's completion reached the backend: the same SST went up again as
  // B. 2 subsumes 1, yet the latest checkpoint's backend has heard of no completion: A stays.
  checkpoint({"B"}, -1);
  REQUIRE(completed() == 2);
  CHECK(exists("A"));
  // 1's notification arrived: snapshot 3 reuses A.
  checkpoint({"A"}, 1);
  REQUIRE(completed() == 3);
  CHECK(exists("A"));
  CHECK(exists("B")); // unused; a backend based on 1 might still have reused it
  checkpoint({"C"}, 3);
  REQUIRE(completed() == 4);
  CHECK_FALSE(exists("B")); // last used by 2, every backend is past 3
  CHECK(exists("A"));       // last used by 3, which the backend's base still is
  checkpoint({"C"}, 4);
  REQUIRE(completed() == 5);
  CHECK_FALSE(exists("A"));
  CHECK(exists("C"));
  // A backend that somehow still reuses A: its checkpoint is aborted, never completed.
  auto aborts = checkpoint_aborts.size();
  checkpoint({"A"}, 3, false);
  CHECK(completed() == 5);
  CHECK(checkpoint_aborts.size() > aborts);
  CHECK(exists("C"));
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "an unreadable latest checkpoint is read again under the restart strategy, and "
                  "the job resumes from it once it reads") {
  checkpoint_dir dir;
  auto pointers = two_checkpoints(dir.path, "corrupt");
  test_stores stores([&] { return store_of(pointers); });
  job_master_config cfg;
  cfg.configuration.set("state.checkpoints.dir", dir.path.string());
  cfg.configuration.set("restart-strategy.type", "fixed-delay");
  cfg.configuration.set("restart-strategy.fixed-delay.attempts", "3");
  cfg.configuration.set("restart-strategy.fixed-delay.delay", "100 ms");
  confirm_resource_manager();
  auto g = test::chain_job(job, {2, 2, 2});
  g.checkpointing.interval = 100;
  start_job_master(std::move(g), cfg, &stores);
  CHECK(results.empty()); // not failed: tried again in 100 ms
  CHECK(slot_requests.empty());
  advance(100ms);
  CHECK(results.empty());
  // The storage answers again: the latest checkpoint is restored, never the older one.
  auto storage = state::checkpoint_storage::create(dir.path.string(), job);
  REQUIRE(storage.has_value());
  state::checkpoint_metadata two;
  two.checkpoint_id = 2;
  std::filesystem::remove(pointers[1].metadata_path);
  REQUIRE(storage->write_metadata(two).has_value());
  advance(100ms);
  register_and_offer();
  REQUIRE(submitted.size() == 6);
  for (const auto& s : submitted) {
    REQUIRE(s.tdd.restore.has_value());
    CHECK(s.tdd.restore->checkpoint_id == 2);
  }
  CHECK(results.empty());
}

namespace {

/// A store whose add reaches the store but answers as a lost connection would (FLINK-25486).
class unknown_outcome_store final : public ha::completed_checkpoint_store {
public:
  expected<unit> add(const ha::checkpoint_pointer& p) override {
    (void)inner_.add(p);
    return make_error(errc::timeout, "connection loss");
  }
  expected<unit> remove(std::int64_t id) override { return inner_.remove(id); }
  expected<std::vector<ha::checkpoint_pointer>> checkpoints() override {
    return inner_.checkpoints();
  }
  expected<unit> shutdown(bool terminal) override { return inner_.shutdown(terminal); }

private:
  ha::standalone_completed_checkpoint_store inner_;
};

} // namespace

TEST_CASE_FIXTURE(job_master_fixture,
                  "an add to the completed checkpoint store with an unknown outcome keeps the "
                  "checkpoint's files when the store holds it") {
  checkpoint_dir dir;
  test_stores stores([] { return std::make_unique<unknown_outcome_store>(); });
  job_master_config cfg;
  cfg.configuration.set("state.checkpoints.dir", dir.path.string());
  confirm_resource_manager();
  auto g = test::chain_job(job, {2, 2, 2});
  g.checkpointing.interval = 100;
  start_job_master(std::move(g), cfg, &stores);
  register_and_offer();
  REQUIRE(submitted.size() == 6);
  report_all(execution_state::running);
  advance(100ms);
  REQUIRE_FALSE(checkpoint_triggers.empty());
  for (const auto& s : submitted)
    REQUIRE(te_call<acknowledge_checkpoint>({job, attempt_of(s), 1, {}}));
  // Not completed (the add failed), but a next leader may find the pointer: the files stay.
  CHECK(master().checkpoint_coordinator()->stats().completed == 0);
  CHECK(std::filesystem::is_regular_file(dir.path / job.to_string() / "chk-1" / "_metadata"));
}

TEST_CASE("a job's own keys under Flink 2's names win over the cluster's deprecated ones") {
  config::configuration cluster;
  cluster.set("state.checkpoints.dir", "/tmp/cluster-checkpoints");
  (void)config::resolve_aliases(cluster);
  graph::job_graph job;
  job.execution_config.job_configuration["execution.checkpointing.dir"] = "/tmp/job-checkpoints";
  auto merged = job_master::job_configuration(cluster, job);
  auto dir = merged.find(config::options::state_checkpoints_dir);
  REQUIRE(dir.has_value());
  REQUIRE(dir->has_value());
  CHECK((*dir)->string() == "/tmp/job-checkpoints");
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "trigger_checkpoint starts a checkpoint at once, and the job's status carries "
                  "its history, the checkpoint settings and the job type") {
  checkpoint_dir dir;
  job_master_config cfg;
  cfg.configuration.set("state.checkpoints.dir", dir.path.string());
  cfg.configuration.set("web.checkpoints.history", "1");
  // No periodic checkpoints: only those asked for. The job sets keys of its own.
  confirm_resource_manager();
  auto g = test::chain_job(job, {2, 2, 2});
  g.execution_config.max_parallelism = 64;
  g.execution_config.job_configuration["restart-strategy.type"] = "none";
  start_job_master(std::move(g), std::move(cfg));
  register_and_offer();
  report_all(execution_state::running);
  REQUIRE(master().status() == job_status::running);
  auto first = te_call<flint::job_master::trigger_checkpoint>(rpc::ack{});
  REQUIRE_MESSAGE(first.has_value(), first.error().to_string());
  CHECK(first->checkpoint_id == 1);
  // The sources are triggered in the same step.
  REQUIRE(checkpoint_triggers.size() == 2);
  CHECK(checkpoint_triggers[0].checkpoint_id == 1);
  auto pending = te_call<request_job_status>(rpc::ack{});
  REQUIRE(pending.has_value());
  CHECK(pending->job_type == "STREAMING");
  CHECK(pending->max_parallelism == 64);
  // The job's own settings, after the JobGraph went into the ExecutionGraph.
  CHECK(pending->job_configuration
        == std::vector<config_entry>{{"restart-strategy.type", "none"}});
  CHECK(pending->checkpointing);
  CHECK(pending->checkpoint_config.interval_ms == 0);
  CHECK(pending->checkpoint_config.mode == "EXACTLY_ONCE");
  CHECK(pending->checkpoint_config.checkpoint_storage == (dir.path / job.to_string()).string());
  REQUIRE(pending->checkpoint_history.size() == 1);
  const auto& p = pending->checkpoint_history[0];
  CHECK(p.id == 1);
  CHECK(p.status == "IN_PROGRESS");
  CHECK_FALSE(p.savepoint);
  CHECK(p.end_time == -1);
  REQUIRE(p.tasks.size() == submitted.size());
  for (const auto& t : p.tasks)
    CHECK(t.ack_time == -1);
  CHECK(pending->restored.id == -1);

  // Every task but the last sends what it measured; the last is an older sender.
  const checkpoint_metrics measured{2048, 0, 7'000'000, 4, 60, 3'000'000};
  for (std::size_t i = 0; i < submitted.size(); ++i)
    REQUIRE(te_call<acknowledge_checkpoint>(
      {job, attempt_of(submitted[i]), 1, {},
       i + 1 < submitted.size() ? measured : checkpoint_metrics{}}));
  auto completed = te_call<request_job_status>(rpc::ack{});
  REQUIRE(completed.has_value());
  REQUIRE(completed->checkpoint_history.size() == 1);
  const auto& c = completed->checkpoint_history[0];
  CHECK(c.status == "COMPLETED");
  CHECK(c.end_time >= c.trigger_time);
  CHECK(c.external_path.find("chk-1") != std::string::npos);
  for (const auto& t : c.tasks)
    CHECK(t.ack_time >= c.trigger_time);
  // The history keeps each subtask's figures as its acknowledgement carried them.
  CHECK(std::count_if(c.tasks.begin(), c.tasks.end(),
                      [&](const auto& t) { return t.metrics == measured; })
        == static_cast<std::ptrdiff_t>(submitted.size() - 1));
  CHECK(std::count_if(c.tasks.begin(), c.tasks.end(),
                      [](const auto& t) { return t.metrics.alignment_duration_nanos == -1; })
        == 1);
  CHECK(completed->checkpoints.latest_id == 1);

  // A second one while none is pending; the history keeps web.checkpoints.history (1) of them.
  auto second = te_call<flint::job_master::trigger_checkpoint>(rpc::ack{});
  REQUIRE(second.has_value());
  CHECK(second->checkpoint_id == 2);
  auto later = te_call<request_job_status>(rpc::ack{});
  REQUIRE(later->checkpoint_history.size() == 1);
  CHECK(later->checkpoint_history[0].id == 2);
  // Fenced as every JobMaster method.
  auto stale = te_call<flint::job_master::trigger_checkpoint>(rpc::ack{}, cluster::job_master_id{5, 5});
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().code == errc::fencing_token_mismatch);
}

TEST_CASE_FIXTURE(job_master_fixture,
                  "trigger_checkpoint is refused, saying why, while the job's tasks do not all run") {
  confirm_resource_manager();
  // RUNNING, its slots requested, no task deployed yet.
  start_job_master();
  REQUIRE(master().status() == job_status::running);
  auto refused = te_call<flint::job_master::trigger_checkpoint>(rpc::ack{});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::rejected);
  CHECK(refused.error().message.find("Could not trigger a checkpoint") != std::string::npos);
  CHECK(checkpoint_triggers.empty());
  // Counted as a failed checkpoint, as Flink counts a trigger that could not start.
  auto status = te_call<request_job_status>(rpc::ack{});
  REQUIRE(status.has_value());
  CHECK(status->checkpoints.failed == 1);
  CHECK(status->checkpoint_history.empty());
}
