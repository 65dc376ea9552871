// The ResourceManager's bookkeeping without actors: leadership epochs, TaskExecutor and JobMaster
// registrations and their ids, slot reports, slot requests, and what a lost TaskExecutor takes.

#include <doctest/doctest.h>

#include "runtime/actors/resource_manager/resource_manager_state.hpp"
#include "test/runtime/actors/heartbeat/manual_executor.hpp"

using namespace flint;
using namespace flint::resource_manager;
using namespace std::chrono_literals;

namespace {

struct recording_actions : slot_manager_actions {
  std::vector<std::pair<cluster::resource_id, cluster::slot_id>> allocations;
  std::vector<cluster::allocation_id> failures;

  void allocate_slot(const cluster::instance_id&, const cluster::resource_id& tm,
                     const cluster::slot_id& slot, const slot_request&) override {
    allocations.emplace_back(tm, slot);
  }
  void notify_allocation_failure(const graph::job_id&, const cluster::allocation_id& allocation,
                                 const std::string&, const error&) override {
    failures.push_back(allocation);
  }
  void release_resource(const cluster::instance_id&, const cluster::resource_id&,
                        const std::string&) override {}
};

const cluster::resource_id tm_1 = "task_executor/tm-1";
const cluster::resource_id tm_2 = "task_executor/tm-2";
const graph::job_id job_a{1, 1};
const graph::job_id job_b{2, 2};
const cluster::job_master_id jm_id{21, 1};
const cluster::job_master_id other_jm_id{21, 2};

cluster::slot_report free_slots(const cluster::resource_id& tm, int n) {
  cluster::slot_report r;
  for (int i = 0; i < n; ++i)
    r.slots.push_back(
      cluster::slot_status{cluster::slot_id{tm, i}, {}, std::nullopt, std::nullopt});
  return r;
}

task_executor_registration_request te_request(const cluster::resource_id& tm) {
  return task_executor_registration_request{tm, tm, 0, "localhost", {}, 2};
}

slot_request request_for(const graph::job_id& job, std::uint64_t n) {
  return slot_request{job, cluster::allocation_id{99, n}, {}, "job_master/" + job.to_string()};
}

job_manager_registration jm(const graph::job_id& job, const cluster::job_master_id& id,
                            const std::string& resource = "jm-1") {
  return job_manager_registration{job, id, resource, "job_master/" + job.to_string(), {}};
}

struct rm_fixture {
  heartbeat::test::manual_executor executor;
  recording_actions actions;
  resource_manager_state st{42};

  rm_fixture() { st.start_leading(slot_manager_config{5min, 30s}, executor, actions); }

  /// Registers `tm` and reports `n` free slots; returns its registration id.
  cluster::instance_id register_te(const cluster::resource_id& tm, int n = 2) {
    auto instance = st.register_task_executor(te_request(tm), {}).instance;
    REQUIRE(st.report_slots(tm, instance, free_slots(tm, n)).has_value());
    return instance;
  }
};

} // namespace

TEST_CASE(
  "each leadership of the resource manager state is a new epoch with a fresh slot manager") {
  heartbeat::test::manual_executor executor;
  recording_actions actions;
  resource_manager_state st{1};
  CHECK_FALSE(st.is_leading());
  CHECK(st.slots() == nullptr);
  auto first = st.start_leading(slot_manager_config{}, executor, actions);
  CHECK(st.is_leading());
  CHECK(st.slots() != nullptr);
  CHECK(st.epoch() == first);
  CHECK(st.is_current_epoch(first));

  st.stop_leading();
  CHECK_FALSE(st.is_leading());
  CHECK_FALSE(st.is_current_epoch(first));
  auto second = st.start_leading(slot_manager_config{}, executor, actions);
  CHECK(second != first);
  CHECK_FALSE(st.is_current_epoch(first));
  CHECK(st.is_current_epoch(second));
}

TEST_CASE("losing leadership forgets every registration") {
  rm_fixture f;
  f.register_te(tm_1);
  f.st.register_job_manager(jm(job_a, jm_id));
  f.st.stop_leading();
  CHECK(f.st.number_of_task_executors() == 0);
  CHECK(f.st.task_executor(tm_1) == nullptr);
  CHECK(f.st.job_manager(job_a) == nullptr);
  CHECK(f.st.overview() == resource_overview{});
  // Not leading: registrations are not taken.
  CHECK(f.st.register_task_executor(te_request(tm_1), {}).instance == cluster::instance_id{});
  CHECK(f.st.number_of_task_executors() == 0);
  CHECK_FALSE(f.st.register_job_manager(jm(job_a, jm_id)).previous.has_value());
  CHECK(f.st.job_manager(job_a) == nullptr);
}

TEST_CASE(
  "a task executor registers under a fresh registration id, and again replacing the old one") {
  rm_fixture f;
  auto first = f.st.register_task_executor(te_request(tm_1), {});
  CHECK_FALSE(first.replaced);
  CHECK(first.instance != cluster::instance_id{});
  REQUIRE(f.st.task_executor(tm_1) != nullptr);
  CHECK(f.st.task_executor(tm_1)->instance == first.instance);
  CHECK(f.st.task_executor(tm_1)->address == tm_1);
  CHECK(f.st.task_executor_by_instance(first.instance) == f.st.task_executor(tm_1));
  REQUIRE(f.st.report_slots(tm_1, first.instance, free_slots(tm_1, 2)).has_value());
  CHECK(f.st.slots()->number_of_registered_slots() == 2);

  auto second = f.st.register_task_executor(te_request(tm_1), {});
  CHECK(second.replaced);
  CHECK(second.instance != first.instance);
  CHECK(f.st.number_of_task_executors() == 1);
  CHECK(f.st.task_executor_by_instance(first.instance) == nullptr);
  // Its slots are gone until the new registration reports them.
  CHECK(f.st.slots()->number_of_registered_slots() == 0);
  CHECK_FALSE(f.st.task_executor(tm_1)->reported);
}

TEST_CASE("a slot report of an unknown task executor or a stale registration is refused") {
  rm_fixture f;
  auto unknown = f.st.report_slots(tm_1, cluster::instance_id{1, 1}, free_slots(tm_1, 1));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::not_found);
  CHECK(unknown.error().message.find("Unknown TaskManager registration id") != std::string::npos);

  auto stale = f.st.register_task_executor(te_request(tm_1), {}).instance;
  auto current = f.st.register_task_executor(te_request(tm_1), {}).instance;
  CHECK(f.st.report_slots(tm_1, stale, free_slots(tm_1, 1)).error().code == errc::not_found);
  CHECK(f.st.slots()->number_of_registered_slots() == 0);

  // The first report registers the slots, later ones update them.
  REQUIRE(f.st.report_slots(tm_1, current, free_slots(tm_1, 1)).has_value());
  CHECK(f.st.task_executor(tm_1)->reported);
  CHECK(f.st.slots()->number_of_registered_slots() == 1);
  REQUIRE(f.st.report_slots(tm_1, current, free_slots(tm_1, 2)).has_value());
  CHECK(f.st.slots()->number_of_registered_slots() == 2);
}

TEST_CASE("a heartbeat's slot report counts like a sent one, and is ignored for unknown ones") {
  rm_fixture f;
  f.st.heartbeat_slot_report(tm_1, free_slots(tm_1, 2));
  CHECK(f.st.slots()->number_of_registered_slots() == 0);
  f.st.register_task_executor(te_request(tm_1), {});
  f.st.heartbeat_slot_report(tm_1, free_slots(tm_1, 2));
  CHECK(f.st.task_executor(tm_1)->reported);
  CHECK(f.st.slots()->number_of_free_slots() == 2);
}

TEST_CASE("a freed slot counts only from the current registration of its owner") {
  rm_fixture f;
  auto instance = f.register_te(tm_1, 1);
  f.st.register_job_manager(jm(job_a, jm_id));
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1)));
  f.st.complete_allocation(cluster::allocation_id{99, 1}, {tm_1, 0}, unit{});
  CHECK(f.st.slots()->number_of_free_slots() == 0);

  CHECK(
    f.st.notify_slot_available(cluster::instance_id{3, 3}, {tm_1, 0}, cluster::allocation_id{99, 1})
      .error()
      .code
    == errc::not_found);
  CHECK(f.st.notify_slot_available(instance, {tm_2, 0}, cluster::allocation_id{99, 1}).error().code
        == errc::not_found);
  CHECK(f.st.slots()->number_of_free_slots() == 0);
  REQUIRE(
    f.st.notify_slot_available(instance, {tm_1, 0}, cluster::allocation_id{99, 1}).has_value());
  CHECK(f.st.slots()->number_of_free_slots() == 1);
}

TEST_CASE("a lost task executor names the job masters whose slots were there") {
  rm_fixture f;
  CHECK_FALSE(f.st.close_task_manager_connection(tm_1).has_value());
  f.register_te(tm_1, 2);
  f.register_te(tm_2, 1);
  f.st.register_job_manager(jm(job_a, jm_id, "jm-a"));
  f.st.register_job_manager(jm(job_b, jm_id, "jm-b"));
  // job_a holds a slot; job_b, registered too, holds none.
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1)));
  REQUIRE(f.actions.allocations.size() == 1);
  f.st.complete_allocation(cluster::allocation_id{99, 1}, f.actions.allocations[0].second, unit{});
  auto lost_tm = f.actions.allocations[0].first;

  auto closed = f.st.close_task_manager_connection(lost_tm);
  REQUIRE(closed.has_value());
  CHECK(closed->registration.id == lost_tm);
  REQUIRE(closed->job_managers.size() == 1);
  CHECK(closed->job_managers[0].job == job_a);
  CHECK(f.st.task_executor(lost_tm) == nullptr);
  CHECK(f.st.task_executor_by_instance(closed->registration.instance) == nullptr);
  CHECK_FALSE(f.st.close_task_manager_connection(lost_tm).has_value());
}

TEST_CASE(
  "an allocation goes only to the task executor still registered under the slot manager's id") {
  rm_fixture f;
  auto old_instance = f.register_te(tm_1);
  CHECK(f.st.allocation_target(old_instance, tm_1) == f.st.task_executor(tm_1));
  CHECK(f.st.allocation_target(old_instance, tm_2) == nullptr);
  auto new_instance = f.register_te(tm_1);
  CHECK(f.st.allocation_target(old_instance, tm_1) == nullptr);
  CHECK(f.st.allocation_target(new_instance, tm_1) != nullptr);
}

TEST_CASE("a task executor is found by its actor's address") {
  rm_fixture f;
  CHECK_FALSE(f.st.task_executor_of(caf::actor_addr{}).has_value());
  f.register_te(tm_1);
  // Without actors every handle is the null one: the registration is found by it.
  CHECK(f.st.task_executor_of(caf::actor_addr{}) == tm_1);
}

TEST_CASE("a job master registering again with its id replaces its registration quietly") {
  rm_fixture f;
  auto first = f.st.register_job_manager(jm(job_a, jm_id, "jm-1"));
  CHECK_FALSE(first.previous.has_value());
  CHECK_FALSE(first.previous_closed);
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1))); // pending: no slots yet

  auto again = f.st.register_job_manager(jm(job_a, jm_id, "jm-2"));
  REQUIRE(again.previous.has_value());
  CHECK(again.previous->resource_id == "jm-1");
  CHECK_FALSE(again.previous_closed);
  CHECK(f.st.job_manager(job_a)->resource_id == "jm-2");
  CHECK(f.st.slots()->number_of_pending_requests() == 1);
}

TEST_CASE("a new job master leader closes the old one's connection and drops its requests") {
  rm_fixture f;
  f.st.register_job_manager(jm(job_a, jm_id, "jm-1"));
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1)));
  auto replaced = f.st.register_job_manager(jm(job_a, other_jm_id, "jm-2"));
  REQUIRE(replaced.previous.has_value());
  CHECK(replaced.previous->job_master_id == jm_id);
  CHECK(replaced.previous_closed);
  CHECK(f.st.job_manager(job_a)->job_master_id == other_jm_id);
  CHECK(f.st.slots()->number_of_pending_requests() == 0);
}

TEST_CASE("slot requests need the registered job master and its id") {
  rm_fixture f;
  auto unknown = f.st.check_slot_request(job_a, jm_id);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::not_found);
  CHECK(unknown.error().message
        == "Could not find registered job manager for job " + job_a.to_string() + ".");
  f.st.register_job_manager(jm(job_a, jm_id));
  CHECK(f.st.check_slot_request(job_a, other_jm_id).error().code == errc::rejected);
  CHECK(f.st.check_slot_request(job_a, jm_id).has_value());

  CHECK(f.st.register_slot_request(request_for(job_a, 1)));
  CHECK_FALSE(f.st.register_slot_request(request_for(job_a, 1))); // duplicate
  CHECK(f.st.overview().number_pending_slot_requests == 1);
  CHECK(f.st.cancel_slot_request(cluster::allocation_id{99, 1}));
  CHECK_FALSE(f.st.cancel_slot_request(cluster::allocation_id{99, 1}));
  CHECK(f.st.overview().number_pending_slot_requests == 0);

  // Not leading: nothing is taken, nothing withdrawn.
  f.st.stop_leading();
  CHECK_FALSE(f.st.register_slot_request(request_for(job_a, 2)));
  CHECK_FALSE(f.st.cancel_slot_request(cluster::allocation_id{99, 2}));
}

TEST_CASE("closing a job master's connection returns it once and drops its pending requests") {
  rm_fixture f;
  CHECK_FALSE(f.st.close_job_manager_connection(job_a).has_value());
  f.st.register_job_manager(jm(job_a, jm_id, "jm-a"));
  f.st.register_job_manager(jm(job_b, jm_id, "jm-b"));
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1)));
  REQUIRE(f.st.register_slot_request(request_for(job_b, 2)));
  CHECK(f.st.job_manager_by_resource("jm-a") == f.st.job_manager(job_a));
  CHECK(f.st.job_manager_by_resource("jm-x") == nullptr);

  auto closed = f.st.close_job_manager_connection(job_a);
  REQUIRE(closed.has_value());
  CHECK(closed->address == "job_master/" + job_a.to_string());
  CHECK(f.st.job_manager(job_a) == nullptr);
  CHECK(f.st.job_manager_by_resource("jm-a") == nullptr);
  CHECK(f.st.slots()->number_of_pending_requests() == 1);
  CHECK_FALSE(f.st.close_job_manager_connection(job_a).has_value());
}

TEST_CASE("allocation answers reach the slot manager, and the overview counts slots and requests") {
  rm_fixture f;
  f.register_te(tm_1, 2);
  f.st.register_job_manager(jm(job_a, jm_id));
  REQUIRE(f.st.register_slot_request(request_for(job_a, 1)));
  REQUIRE(f.actions.allocations.size() == 1);
  // Each TaskExecutor is listed with its slots (REST's /taskmanagers).
  CHECK(f.st.overview() == resource_overview{1, 2, 1, 1, {task_manager_info{tm_1, tm_1, 0, 2, 1}}});
  // A failed answer frees the slot and retries the request; an ack allocates it.
  f.st.complete_allocation(cluster::allocation_id{99, 1}, f.actions.allocations[0].second,
                           make_error(errc::timeout, "no answer"));
  REQUIRE(f.actions.allocations.size() == 2);
  f.st.complete_allocation(cluster::allocation_id{99, 1}, f.actions.allocations[1].second, unit{});
  CHECK(f.st.overview() == resource_overview{1, 2, 1, 0, {task_manager_info{tm_1, tm_1, 0, 2, 1}}});
  CHECK(f.st.slots()->slot_of(cluster::allocation_id{99, 1}) != nullptr);
}

TEST_CASE("idle releases are counted") {
  rm_fixture f;
  CHECK(f.st.idle_releases() == 0);
  f.st.count_idle_release();
  f.st.count_idle_release();
  CHECK(f.st.idle_releases() == 2);
}
