// The TaskExecutor's bookkeeping without actors: the ResourceManager connection and its epochs,
// slot requests, offers and time-outs, task deployment, and when a job may leave.

#include <doctest/doctest.h>

#include <set>

#include "runtime/actors/task_executor/task_executor_state.hpp"

using namespace flint;
using namespace flint::task_executor;

namespace {

const cluster::resource_id this_tm = "task_executor/tm-1";
const graph::job_id job_a{1, 1};
const graph::job_id job_b{2, 2};
const cluster::allocation_id alloc_1{7, 1};
const cluster::allocation_id alloc_2{7, 2};
const rpc::fencing_token rm_id{11, 1};
const rpc::fencing_token other_rm_id{11, 2};
const cluster::job_master_id jm_id{21, 1};
const cluster::job_master_id other_jm_id{21, 2};

graph::execution_attempt_id attempt(int subtask) {
  return graph::execution_attempt_id{{}, graph::job_vertex_id{3, 3}, subtask, 0};
}

leader::leader_address rm_address(const std::string& id = "resource_manager/rm") {
  return leader::leader_address{id, {}, {}, 0};
}

struct te_fixture {
  std::set<graph::job_id> partitions_held;
  task_executor_state st{
    this_tm, 2, cluster::resource_profile{1, 256},
    [this](const graph::job_id& job) { return partitions_held.count(job) != 0; }};

  /// Follows `rm_id` and registers there under `registration`.
  void connect_rm(cluster::instance_id registration = {5, 5}) {
    st.set_resource_manager_leader(rm_address(), rm_id);
    auto epoch = st.begin_resource_manager_registration();
    REQUIRE(
      st.resource_manager_registered(epoch, resource_manager_connection{registration, "rm", {}}));
  }

  request_slot_request slot_request(std::int32_t index, const graph::job_id& job,
                                    const cluster::allocation_id& allocation,
                                    const rpc::fencing_token& id = rm_id) const {
    return request_slot_request{
      cluster::slot_id{this_tm, index}, job, allocation, {}, "job_master/x", id};
  }

  /// Slot `index` reserved for `job` under `allocation`, the job connected to `jm_id`.
  void reserve_connected(std::int32_t index, const graph::job_id& job,
                         const cluster::allocation_id& allocation) {
    REQUIRE(st.request_slot(slot_request(index, job, allocation)).has_value());
    if (!st.jobs().get(job)->connection)
      REQUIRE(st.jobs().connect(job, job_master_connection{jm_id, "jm-" + job.to_string(), {}}));
  }

  void deploy(const graph::execution_attempt_id& a, const graph::job_id& job,
              const cluster::allocation_id& allocation) {
    REQUIRE(st.accept_task(job, jm_id, allocation, a).has_value());
    st.add_task(a,
                task_record{{},
                            "task " + std::to_string(a.subtask_index),
                            job,
                            allocation,
                            graph::execution_state::created,
                            {}});
  }
};

} // namespace

TEST_CASE("the task executor state follows one resource manager leader and knows it by id") {
  te_fixture f;
  CHECK_FALSE(f.st.has_resource_manager_leader());
  CHECK_FALSE(f.st.is_current_resource_manager_leader(rm_address(), rm_id));
  f.st.set_resource_manager_leader(rm_address(), rm_id);
  CHECK(f.st.has_resource_manager_leader());
  CHECK(f.st.resource_manager_address().endpoint_id == "resource_manager/rm");
  CHECK(f.st.resource_manager_leader_id() == rm_id);
  CHECK(f.st.is_current_resource_manager_leader(rm_address(), rm_id));
  CHECK_FALSE(f.st.is_current_resource_manager_leader(rm_address(), other_rm_id));
  CHECK_FALSE(f.st.is_current_resource_manager_leader(rm_address("resource_manager/other"), rm_id));
  // A nil leader is none, even when it is the one followed.
  f.st.set_resource_manager_leader(rm_address(), {});
  CHECK_FALSE(f.st.has_resource_manager_leader());
  CHECK_FALSE(f.st.is_current_resource_manager_leader(rm_address(), {}));
  f.st.set_resource_manager_leader({}, rm_id);
  CHECK_FALSE(f.st.has_resource_manager_leader());
}

TEST_CASE("a resource manager registration of an older attempt is refused") {
  te_fixture f;
  f.st.set_resource_manager_leader(rm_address(), rm_id);
  auto first = f.st.begin_resource_manager_registration();
  auto second = f.st.begin_resource_manager_registration();
  CHECK_FALSE(f.st.is_current_resource_manager_epoch(first));
  CHECK(f.st.is_current_resource_manager_epoch(second));
  CHECK_FALSE(
    f.st.resource_manager_registered(first, resource_manager_connection{{5, 5}, "rm", {}}));
  CHECK_FALSE(f.st.is_connected_to_resource_manager());
  CHECK(f.st.resource_manager() == nullptr);
  CHECK(f.st.resource_manager_id().is_nil());

  CHECK(f.st.resource_manager_registered(second, resource_manager_connection{{5, 5}, "rm", {}}));
  CHECK(f.st.is_connected_to_resource_manager());
  REQUIRE(f.st.resource_manager() != nullptr);
  CHECK(f.st.resource_manager()->registration_id == cluster::instance_id{5, 5});
  CHECK(f.st.resource_manager_id() == rm_id);
}

TEST_CASE("closing the resource manager connection returns it once and outdates its attempt") {
  te_fixture f;
  CHECK_FALSE(f.st.close_resource_manager_connection().has_value());
  f.connect_rm();
  auto epoch = f.st.begin_resource_manager_registration();
  auto closed = f.st.close_resource_manager_connection();
  REQUIRE(closed.has_value());
  CHECK(closed->resource_manager_resource_id == "rm");
  CHECK_FALSE(f.st.is_current_resource_manager_epoch(epoch));
  CHECK_FALSE(f.st.is_connected_to_resource_manager());
  CHECK_FALSE(f.st.close_resource_manager_connection().has_value());
  // The leader is still followed: a reconnect goes there.
  CHECK(f.st.has_resource_manager_leader());
}

TEST_CASE(
  "calls are fenced by the resource manager id for rm_scope and by the job master id per job") {
  te_fixture f;
  CHECK(f.st.expected_token(rm_scope).is_nil());
  f.connect_rm();
  CHECK(f.st.expected_token(rm_scope) == rm_id);
  CHECK(f.st.expected_token(job_a.to_string()).is_nil());
  f.reserve_connected(0, job_a, alloc_1);
  CHECK(f.st.expected_token(job_a.to_string()) == jm_id);
  CHECK(f.st.expected_token(job_b.to_string()).is_nil());
  CHECK(f.st.expected_token("not a scope").is_nil());
}

TEST_CASE("a slot request is refused unless it comes from the resource manager registered with") {
  te_fixture f;
  auto unconnected = f.st.request_slot(f.slot_request(0, job_a, alloc_1));
  REQUIRE_FALSE(unconnected.has_value());
  CHECK(unconnected.error().code == errc::fencing_token_mismatch);
  CHECK(unconnected.error().message.find("is not connected to the resource manager")
        != std::string::npos);

  f.connect_rm();
  auto stale = f.st.request_slot(f.slot_request(0, job_a, alloc_1, other_rm_id));
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().code == errc::fencing_token_mismatch);

  auto foreign = f.slot_request(0, job_a, alloc_1);
  foreign.slot.owner = "task_executor/tm-2";
  CHECK(f.st.request_slot(foreign).error().code == errc::invalid_argument);
  CHECK(f.st.slots().number_of_free_slots() == 2);
  CHECK(f.st.jobs().size() == 0);
}

TEST_CASE("a slot request reserves the slot for its job, once") {
  te_fixture f;
  f.connect_rm();
  auto reserved = f.st.request_slot(f.slot_request(0, job_a, alloc_1));
  REQUIRE(reserved.has_value());
  CHECK(reserved->awaits_acceptance);
  CHECK_FALSE(reserved->job_manager_connected);
  CHECK(f.st.slots().is_allocated(0, job_a, alloc_1));
  REQUIRE(f.st.jobs().get(job_a) != nullptr);
  CHECK(f.st.jobs().get(job_a)->target_address == "job_master/x");
  // A duplicate is fine; the slot held by another allocation is refused.
  CHECK(f.st.request_slot(f.slot_request(0, job_a, alloc_1)).has_value());
  CHECK(f.st.request_slot(f.slot_request(0, job_b, alloc_2)).error().code == errc::rejected);
  CHECK(f.st.jobs().get(job_b) == nullptr);
  // Once the job is connected and the slot accepted, a repeated request neither waits nor is new.
  f.st.jobs().connect(job_a, job_master_connection{jm_id, "jm", {}});
  (void)f.st.slots().mark_slot_active(alloc_1);
  auto again = f.st.request_slot(f.slot_request(0, job_a, alloc_1));
  REQUIRE(again.has_value());
  CHECK_FALSE(again->awaits_acceptance);
  CHECK(again->job_manager_connected);
}

TEST_CASE("a slot may be freed only by its own job, and is free once its tasks are gone") {
  te_fixture f;
  f.connect_rm();
  CHECK(f.st.check_free_slot(job_a, alloc_1).error().code == errc::not_found);
  CHECK_FALSE(f.st.free_slot(alloc_1).has_value());
  f.reserve_connected(0, job_a, alloc_1);
  CHECK(f.st.check_free_slot(job_b, alloc_1).error().code == errc::rejected);
  CHECK(f.st.check_free_slot(job_a, alloc_1).has_value());

  f.deploy(attempt(0), job_a, alloc_1);
  f.st.arm_slot_timeout(alloc_1);
  // A slot with a task is releasing, not free; the task's removal frees it.
  CHECK_FALSE(f.st.free_slot(alloc_1).has_value());
  CHECK(f.st.has_slot_timeout(alloc_1));
  auto freed = f.st.remove_task(attempt(0));
  REQUIRE(freed.has_value());
  CHECK(freed->job == job_a);
  CHECK(freed->index == 0);
  CHECK(freed->allocation == alloc_1);
  CHECK_FALSE(f.st.has_slot_timeout(alloc_1));
  CHECK(f.st.slots().is_slot_free(0));

  f.reserve_connected(1, job_a, alloc_2);
  f.st.arm_slot_timeout(alloc_2);
  auto direct = f.st.free_slot(alloc_2);
  REQUIRE(direct.has_value());
  CHECK(direct->index == 1);
  CHECK_FALSE(f.st.has_slot_timeout(alloc_2));
}

TEST_CASE("a slot time-out counts only for its latest ticket") {
  te_fixture f;
  auto first = f.st.arm_slot_timeout(alloc_1);
  auto second = f.st.arm_slot_timeout(alloc_1);
  CHECK(first != second);
  CHECK_FALSE(f.st.slot_timeout_elapsed(alloc_1, first));
  CHECK(f.st.slot_timeout_elapsed(alloc_1, second));
  // Fired once; and a disarmed time-out never fires.
  CHECK_FALSE(f.st.slot_timeout_elapsed(alloc_1, second));
  auto third = f.st.arm_slot_timeout(alloc_2);
  f.st.disarm_slot_timeout(alloc_2);
  CHECK_FALSE(f.st.has_slot_timeout(alloc_2));
  CHECK_FALSE(f.st.slot_timeout_elapsed(alloc_2, third));
}

TEST_CASE("only an active slot becomes inactive and waits again") {
  te_fixture f;
  f.connect_rm();
  CHECK_FALSE(f.st.mark_slot_inactive(alloc_1));
  f.reserve_connected(0, job_a, alloc_1);
  CHECK_FALSE(f.st.mark_slot_inactive(alloc_1)); // allocated, not active
  (void)f.st.slots().mark_slot_active(alloc_1);
  CHECK(f.st.mark_slot_inactive(alloc_1));
  CHECK(f.st.slots().slot_of(alloc_1)->state == task_slot_state::allocated);
}

TEST_CASE("a job master's answer activates the accepted offers and returns the rejected ones") {
  te_fixture f;
  f.connect_rm();
  f.reserve_connected(0, job_a, alloc_1);
  f.reserve_connected(1, job_a, alloc_2);
  f.st.arm_slot_timeout(alloc_1);
  f.st.arm_slot_timeout(alloc_2);
  auto offers = f.st.slots().offers_for(job_a);
  REQUIRE(offers.size() == 2);
  auto accepted_1 =
    std::vector<cluster::slot_offer>{offers[0].allocation == alloc_1 ? offers[0] : offers[1]};
  auto rejected = f.st.accept_offers(job_a, offers, accepted_1);
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].allocation == alloc_2);
  CHECK(f.st.slots().slot_of(alloc_1)->state == task_slot_state::active);
  CHECK_FALSE(f.st.has_slot_timeout(alloc_1));
  CHECK(f.st.slots().slot_of(alloc_2)->state == task_slot_state::allocated);
  CHECK(f.st.has_slot_timeout(alloc_2));
  // A slot freed meanwhile, or an answer about another job, changes nothing.
  (void)f.st.free_slot(alloc_2);
  CHECK(f.st.accept_offers(job_a, offers, {}).size() == 1); // alloc_1 only; alloc_2 is gone
  CHECK(f.st.accept_offers(job_b, offers, offers).empty());
}

TEST_CASE(
  "a task is accepted only for a connected job, its job master's id and an allocated slot") {
  te_fixture f;
  f.connect_rm();
  REQUIRE(f.st.request_slot(f.slot_request(0, job_a, alloc_1)).has_value());
  auto no_job_master = f.st.accept_task(job_a, jm_id, alloc_1, attempt(0));
  REQUIRE_FALSE(no_job_master.has_value());
  CHECK(no_job_master.error().code == errc::illegal_state);
  CHECK(no_job_master.error().message.find("no JobManager associated") != std::string::npos);
  CHECK(f.st.accept_task(job_b, jm_id, alloc_1, attempt(0)).error().code == errc::illegal_state);

  f.st.jobs().connect(job_a, job_master_connection{jm_id, "jm", {}});
  CHECK(f.st.accept_task(job_a, other_jm_id, alloc_1, attempt(0)).error().code
        == errc::fencing_token_mismatch);
  CHECK(f.st.accept_task(job_a, jm_id, alloc_2, attempt(0)).error().code == errc::not_found);

  f.st.arm_slot_timeout(alloc_1);
  CHECK(f.st.accept_task(job_a, jm_id, alloc_1, attempt(0)).has_value());
  CHECK(f.st.slots().slot_of(alloc_1)->state == task_slot_state::active);
  CHECK_FALSE(f.st.has_slot_timeout(alloc_1));
  // The same attempt twice is a duplicate.
  CHECK(f.st.accept_task(job_a, jm_id, alloc_1, attempt(0)).error().code == errc::rejected);
}

TEST_CASE("tasks are found by attempt and slot, switch state, and leave at the end") {
  te_fixture f;
  f.connect_rm();
  f.reserve_connected(0, job_a, alloc_1);
  f.deploy(attempt(0), job_a, alloc_1);
  f.deploy(attempt(1), job_a, alloc_1);
  CHECK(f.st.tasks().size() == 2);
  REQUIRE(f.st.task(attempt(0)) != nullptr);
  CHECK(f.st.task(attempt(0))->name == "task 0");
  CHECK(f.st.task(attempt(5)) == nullptr);
  CHECK(f.st.tasks_of(alloc_1).size() == 2);
  CHECK(f.st.tasks_of(alloc_2).empty());

  auto cancel = f.st.task_of_job(job_a, attempt(1));
  REQUIRE(cancel.has_value());
  CHECK((*cancel)->name == "task 1");
  CHECK(f.st.task_of_job(job_b, attempt(1)).error().code == errc::not_found);
  CHECK(f.st.task_of_job(job_a, attempt(5)).error().code == errc::not_found);

  CHECK(f.st.switch_task_state(attempt(0), graph::execution_state::running)
        == graph::execution_state::created);
  CHECK(f.st.task(attempt(0))->state == graph::execution_state::running);
  CHECK_FALSE(f.st.switch_task_state(attempt(5), graph::execution_state::running).has_value());

  // The slot is active and still holds a task: removing one frees nothing.
  CHECK_FALSE(f.st.remove_task(attempt(0)).has_value());
  CHECK_FALSE(f.st.remove_task(attempt(0)).has_value()); // unknown now
  CHECK(f.st.tasks().size() == 1);
  f.st.clear_tasks();
  CHECK(f.st.tasks().empty());
}

TEST_CASE("a job master's registration connects, is ignored, or replaces the connection") {
  te_fixture f;
  CHECK(f.st.job_manager_gained_leadership(job_a, jm_id)
        == job_manager_connection_change::unknown_job);
  f.connect_rm();
  REQUIRE(f.st.request_slot(f.slot_request(0, job_a, alloc_1)).has_value());
  CHECK(f.st.job_manager_gained_leadership(job_a, jm_id) == job_manager_connection_change::connect);
  CHECK_FALSE(f.st.is_connected_to(job_a, jm_id));
  f.st.jobs().connect(job_a, job_master_connection{jm_id, "jm", {}});
  CHECK(f.st.job_manager_gained_leadership(job_a, jm_id)
        == job_manager_connection_change::unchanged);
  CHECK(f.st.job_manager_gained_leadership(job_a, other_jm_id)
        == job_manager_connection_change::replace);
  CHECK(f.st.is_connected_to(job_a, jm_id));
  CHECK_FALSE(f.st.is_connected_to(job_a, other_jm_id));
  CHECK_FALSE(f.st.is_connected_to(job_b, jm_id));
}

TEST_CASE("the connected job masters are listed for the goodbye, and peers dropped at shutdown") {
  te_fixture f;
  f.connect_rm();
  f.reserve_connected(0, job_a, alloc_1);
  REQUIRE(f.st.request_slot(f.slot_request(1, job_b, alloc_2)).has_value()); // not connected
  auto connections = f.st.job_manager_connections();
  REQUIRE(connections.size() == 1);
  CHECK(connections[0].job_master_id == jm_id);

  f.st.drop_peers();
  CHECK(f.st.job_manager_connections().empty());
  CHECK(f.st.jobs().size() == 0);
  CHECK_FALSE(f.st.is_connected_to_resource_manager());
  CHECK(f.st.resource_manager_address().empty());
}

TEST_CASE("a job stays while a slot or a partition of it is here") {
  te_fixture f;
  f.connect_rm();
  CHECK_FALSE(f.st.holds_partitions_of(job_a));
  CHECK_FALSE(f.st.has_allocated_resources(job_a));
  f.reserve_connected(0, job_a, alloc_1);
  CHECK(f.st.has_allocated_resources(job_a));
  CHECK_FALSE(f.st.remove_job_if_no_slots(job_a));
  CHECK(f.st.jobs().get(job_a) != nullptr);

  f.partitions_held.insert(job_a);
  (void)f.st.free_slot(alloc_1);
  CHECK(f.st.holds_partitions_of(job_a));
  CHECK(f.st.has_allocated_resources(job_a));
  f.partitions_held.clear();
  CHECK_FALSE(f.st.has_allocated_resources(job_a));
  CHECK(f.st.remove_job_if_no_slots(job_a));
  CHECK_FALSE(f.st.remove_job_if_no_slots(job_a)); // gone already

  // Without a partition tracker no partition is ever held.
  task_executor_state plain{this_tm, 1, {}};
  CHECK_FALSE(plain.holds_partitions_of(job_a));
  CHECK(plain.resource_id() == this_tm);
}
