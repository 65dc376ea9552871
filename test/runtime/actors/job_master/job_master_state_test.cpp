// The JobMaster's bookkeeping without actors: the job's status and final result, registered
// TaskExecutors and the actors they are watched as, the ResourceManager leader and connection
// generations, and the status report.

#include <doctest/doctest.h>

#include "runtime/actors/job_master/job_master_state.hpp"
#include "test/runtime/actors/job_master/test_jobs.hpp"

using namespace flint;
using namespace flint::job_master;
using graph::execution_state;
using graph::job_status;

namespace {

struct quiet_actions : scheduler_actions {
  std::vector<slot_pool::slot_request_id> allocations;
  void allocate_slot(const slot_pool::slot_request_id& r,
                     const cluster::resource_profile&) override {
    allocations.push_back(r);
  }
  void release_slot(const slot_pool::slot_request_id&, const std::string&) override {}
  void submit_task(const graph::execution_attempt_id& a, const slot_pool::allocated_slot&,
                   graph::task_deployment_descriptor) override {
    submits.push_back(a);
  }
  void cancel_task(const graph::execution_attempt_id&, const slot_pool::allocated_slot&) override {}
  void job_status_changed(job_status, job_status, const std::string&) override {}
  void schedule_restart(std::chrono::milliseconds, std::uint64_t) override {}
  void release_partitions(const cluster::resource_id&,
                          std::vector<graph::intermediate_result_partition_id>) override {}
  std::vector<graph::execution_attempt_id> submits;
};

const graph::job_id job{0x11, 0x22};
const cluster::resource_manager_id rm_id{31, 1};
const cluster::resource_manager_id other_rm_id{31, 2};

leader::leader_address rm_address(const std::string& id = "resource_manager/rm") {
  return leader::leader_address{id, {}, {}, 0};
}

task_manager_connection tm_connection(const cluster::resource_id& id) {
  return task_manager_connection{id, cluster::task_manager_location{id, "localhost", 0}, {}};
}

slot_pool::allocated_slot slot(int index) {
  return slot_pool::allocated_slot{
    cluster::allocation_id{0xa, static_cast<std::uint64_t>(index)}, index,
    cluster::task_manager_location{"task_executor/tm-1", "localhost", 0}, "task_executor/tm-1"};
}

struct jm_fixture {
  quiet_actions actions;
  job_master_state st{job};

  /// Gives the state a scheduler of a chain job with `parallelisms`.
  scheduler& with_scheduler(std::vector<int> parallelisms) {
    auto graph = graph::execution_graph::build(test::chain_job(job, std::move(parallelisms)));
    REQUIRE(graph.has_value());
    st.set_scheduler(
      std::make_unique<scheduler>(std::move(*graph), scheduler_settings{}, actions, nullptr));
    return *st.job_scheduler();
  }
};

} // namespace

TEST_CASE("the job master state reports CREATED without a scheduler, then the scheduler's status") {
  jm_fixture f;
  CHECK(f.st.job() == job);
  CHECK(f.st.job_scheduler() == nullptr);
  CHECK(f.st.status() == job_status::created);
  CHECK_FALSE(f.st.is_globally_terminated());
  CHECK_FALSE(f.st.accepts_task_managers());
  auto& s = f.with_scheduler({1});
  CHECK(f.st.job_scheduler() == &s);
  CHECK(f.st.accepts_task_managers());
  s.start_scheduling();
  CHECK(f.st.status() == job_status::running);
}

TEST_CASE("a job that could not start has failed and takes no task executors") {
  jm_fixture f;
  f.st.fail_before_start("Could not create the ExecutionGraph");
  REQUIRE(f.st.result().has_value());
  CHECK(f.st.result()->status == job_status::failed);
  CHECK(f.st.result()->failure_cause == "Could not create the ExecutionGraph");
  CHECK(f.st.status() == job_status::failed);
  CHECK(f.st.is_globally_terminated());
  CHECK_FALSE(f.st.accepts_task_managers());
  // The terminal state is still reported, once.
  CHECK(f.st.reach_terminal_state(job_status::failed, "Could not create the ExecutionGraph"));
  CHECK_FALSE(f.st.reach_terminal_state(job_status::failed, "again"));
  CHECK(f.st.result()->failure_cause == "Could not create the ExecutionGraph");
}

TEST_CASE("the terminal state is recorded once, with the exception history and restarts") {
  jm_fixture f;
  auto& s = f.with_scheduler({1});
  s.start_scheduling();
  REQUIRE(f.actions.allocations.size() == 1);
  s.on_slot_allocated(f.actions.allocations[0], slot(0));
  REQUIRE(f.actions.submits.size() == 1);
  auto attempt = f.actions.submits[0];
  REQUIRE(s.update_task_execution_state({job, attempt, execution_state::running, {}}).has_value());
  REQUIRE(
    s.update_task_execution_state({job, attempt, execution_state::failed, "boom"}).has_value());
  REQUIRE(s.status() == job_status::failed);

  CHECK(f.st.reach_terminal_state(job_status::failed, "Source: numbers (1/1) failed: boom"));
  REQUIRE(f.st.result().has_value());
  CHECK(f.st.result()->job == job);
  CHECK(f.st.result()->failure_cause == "Source: numbers (1/1) failed: boom");
  REQUIRE(f.st.result()->failures.size() == 1);
  CHECK(f.st.result()->failures[0].cause.find("boom") != std::string::npos);
  CHECK(f.st.is_globally_terminated());
  CHECK_FALSE(f.st.accepts_task_managers());
  CHECK_FALSE(f.st.reach_terminal_state(job_status::canceled, "late"));
  CHECK(f.st.result()->status == job_status::failed);
}

TEST_CASE("the status report counts tasks, slots and registered task executors") {
  jm_fixture f;
  auto bare = f.st.status_report();
  CHECK(bare.status == job_status::created);
  CHECK(bare.tasks == 0);
  f.st.add_task_manager("task_executor/tm-1", tm_connection("task_executor/tm-1"),
                        caf::actor_addr{});
  CHECK(f.st.status_report().registered_task_managers == 1);

  auto& s = f.with_scheduler({2, 2});
  s.start_scheduling();
  auto report = f.st.status_report();
  CHECK(report.status == job_status::running);
  CHECK(report.tasks == 4);
  CHECK(report.tasks_running == 0);
  CHECK(report.slots_needed == 2);
  CHECK(report.slots_assigned == 0);
  REQUIRE(report.pending_slot_requests.size() == 2);
  CHECK(report.pending_slot_requests[0].request.rfind("SlotRequestId{", 0) == 0);
  s.on_slot_allocated(f.actions.allocations[0], slot(0));
  CHECK(f.st.status_report().slots_assigned == 1);
}

TEST_CASE("task executors register once, are found by id, and a refusal names the unknown one") {
  jm_fixture f;
  CHECK_FALSE(f.st.is_registered_task_manager("task_executor/tm-1"));
  auto unknown = f.st.known_task_manager("task_executor/tm-1");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::rejected);
  CHECK(unknown.error().message == "Unknown TaskManager task_executor/tm-1");
  CHECK(f.st.task_manager("task_executor/tm-1") == nullptr);

  f.st.add_task_manager("task_executor/tm-1", tm_connection("task_executor/tm-1"),
                        caf::actor_addr{});
  CHECK(f.st.is_registered_task_manager("task_executor/tm-1"));
  auto known = f.st.known_task_manager("task_executor/tm-1");
  REQUIRE(known.has_value());
  CHECK((*known)->address == "task_executor/tm-1");
  CHECK(f.st.task_manager("task_executor/tm-1") == *known);
  CHECK(f.st.task_managers().size() == 1);
}

TEST_CASE(
  "a removed task executor is no longer watched, and a down actor names its task executor once") {
  jm_fixture f;
  CHECK_FALSE(f.st.remove_task_manager("task_executor/tm-1").has_value());
  CHECK_FALSE(f.st.task_manager_down(caf::actor_addr{}).has_value());

  f.st.add_task_manager("task_executor/tm-1", tm_connection("task_executor/tm-1"),
                        caf::actor_addr{});
  auto removed = f.st.remove_task_manager("task_executor/tm-1");
  REQUIRE(removed.has_value());
  CHECK(removed->connection.address == "task_executor/tm-1");
  CHECK(removed->watched.has_value());
  CHECK_FALSE(f.st.is_registered_task_manager("task_executor/tm-1"));
  CHECK_FALSE(f.st.task_manager_down(caf::actor_addr{}).has_value());

  // Down first: the TaskExecutor is still registered, but no longer watched.
  f.st.add_task_manager("task_executor/tm-2", tm_connection("task_executor/tm-2"),
                        caf::actor_addr{});
  CHECK(f.st.task_manager_down(caf::actor_addr{}) == cluster::resource_id{"task_executor/tm-2"});
  CHECK_FALSE(f.st.task_manager_down(caf::actor_addr{}).has_value());
  auto after_down = f.st.remove_task_manager("task_executor/tm-2");
  REQUIRE(after_down.has_value());
  CHECK_FALSE(after_down->watched.has_value());
}

TEST_CASE(
  "a retrieved resource manager leader connects, is kept, is lost, or is ignored once the job is done") {
  jm_fixture f;
  CHECK(f.st.notify_resource_manager_leader(rm_address(), rm_id)
        == resource_manager_leader_change::connect);
  CHECK(f.st.reconnect_target().has_value());
  f.st.begin_resource_manager_connection({}, rm_id, "resource_manager/rm");
  CHECK(f.st.notify_resource_manager_leader(rm_address(), rm_id)
        == resource_manager_leader_change::unchanged);
  CHECK(f.st.notify_resource_manager_leader(rm_address(), other_rm_id)
        == resource_manager_leader_change::connect);
  CHECK(f.st.reconnect_target()->second == other_rm_id);
  CHECK(f.st.notify_resource_manager_leader(rm_address("resource_manager/other"), rm_id)
        == resource_manager_leader_change::connect);

  CHECK(f.st.notify_resource_manager_leader({}, rm_id) == resource_manager_leader_change::lost);
  CHECK_FALSE(f.st.reconnect_target().has_value());
  CHECK(f.st.notify_resource_manager_leader(rm_address(), {})
        == resource_manager_leader_change::lost);

  f.st.notify_resource_manager_leader(rm_address(), rm_id);
  f.st.fail_before_start("stop");
  CHECK(f.st.notify_resource_manager_leader(rm_address(), other_rm_id)
        == resource_manager_leader_change::ignore);
  // A finished job reconnects nowhere.
  CHECK_FALSE(f.st.reconnect_target().has_value());
}

TEST_CASE("a resource manager registration of an older connection is stale") {
  jm_fixture f;
  CHECK_FALSE(f.st.resource_manager_registered(1, "rm"));
  auto first = f.st.begin_resource_manager_connection({}, rm_id, "resource_manager/rm");
  CHECK(f.st.resource_manager() != nullptr);
  CHECK_FALSE(f.st.is_connected_to_resource_manager());
  CHECK(f.st.is_resource_manager(rm_id));
  CHECK_FALSE(f.st.is_resource_manager(other_rm_id));
  f.st.close_resource_manager_connection();
  auto second = f.st.begin_resource_manager_connection({}, other_rm_id, "resource_manager/rm");
  CHECK_FALSE(f.st.resource_manager_registered(first, "rm"));
  CHECK_FALSE(f.st.is_connected_to_resource_manager());
  CHECK(f.st.resource_manager_registered(second, "rm"));
  CHECK(f.st.is_connected_to_resource_manager());
  CHECK(f.st.resource_manager()->resource_id == "rm");
  CHECK(f.st.resource_manager()->id == other_rm_id);
}

TEST_CASE("closing the resource manager connection returns it once and outdates its registration") {
  jm_fixture f;
  CHECK_FALSE(f.st.close_resource_manager_connection().has_value());
  auto generation = f.st.begin_resource_manager_connection({}, rm_id, "resource_manager/rm");
  REQUIRE(f.st.resource_manager_registered(generation, "rm"));
  auto closed = f.st.close_resource_manager_connection();
  REQUIRE(closed.has_value());
  CHECK(closed->established);
  CHECK(closed->address == "resource_manager/rm");
  CHECK(f.st.resource_manager() == nullptr);
  CHECK_FALSE(f.st.is_resource_manager(rm_id));
  CHECK_FALSE(f.st.resource_manager_registered(generation, "rm"));
  CHECK_FALSE(f.st.close_resource_manager_connection().has_value());
}

TEST_CASE("dropping the peers forgets task executors, the resource manager and its leader") {
  jm_fixture f;
  f.st.add_task_manager("task_executor/tm-1", tm_connection("task_executor/tm-1"),
                        caf::actor_addr{});
  f.st.notify_resource_manager_leader(rm_address(), rm_id);
  f.st.begin_resource_manager_connection({}, rm_id, "resource_manager/rm");
  f.st.drop_peers();
  CHECK(f.st.task_managers().empty());
  CHECK_FALSE(f.st.task_manager_down(caf::actor_addr{}).has_value());
  CHECK(f.st.resource_manager() == nullptr);
  CHECK_FALSE(f.st.reconnect_target().has_value());
}
