// The SlotManager without actors: slot reports, both-way matching of free slots and pending
// requests, allocation answers, time-outs on a manual clock.

#include <doctest/doctest.h>

#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "test/runtime/actors/heartbeat/manual_executor.hpp"

using namespace flint;
using namespace flint::resource_manager;
using namespace std::chrono_literals;

namespace {

struct recording_actions : slot_manager_actions {
  struct allocation {
    cluster::instance_id instance;
    cluster::resource_id task_manager;
    cluster::slot_id slot;
    slot_request request;
  };
  struct failure {
    graph::job_id job;
    cluster::allocation_id allocation;
    std::string target;
    error cause;
  };
  struct release {
    cluster::instance_id instance;
    cluster::resource_id task_manager;
    std::string cause;
  };
  std::vector<allocation> allocations;
  std::vector<failure> failures;
  std::vector<release> releases;

  void allocate_slot(const cluster::instance_id& instance, const cluster::resource_id& tm,
                     const cluster::slot_id& slot, const slot_request& request) override {
    allocations.push_back({instance, tm, slot, request});
  }
  void notify_allocation_failure(const graph::job_id& job, const cluster::allocation_id& allocation,
                                 const std::string& target, const error& cause) override {
    failures.push_back({job, allocation, target, cause});
  }
  void release_resource(const cluster::instance_id& instance, const cluster::resource_id& tm,
                        const std::string& cause) override {
    releases.push_back({instance, tm, cause});
  }
};

const graph::job_id job_a{1, 1};
const graph::job_id job_b{2, 2};
const cluster::instance_id tm1_instance{10, 1};
const cluster::instance_id tm2_instance{10, 2};

cluster::slot_report free_slots(const std::string& tm, int n) {
  cluster::slot_report r;
  for (int i = 0; i < n; ++i)
    r.slots.push_back(
      cluster::slot_status{cluster::slot_id{tm, i}, {}, std::nullopt, std::nullopt});
  return r;
}

slot_request request_for(const graph::job_id& job, std::uint64_t n) {
  return slot_request{job, cluster::allocation_id{99, n}, {}, "job_master/" + job.to_string()};
}

struct fixture {
  heartbeat::test::manual_executor clock;
  recording_actions actions;
  slot_manager sm{slot_manager_config{5min, 30s}, clock, actions};
};

} // namespace

TEST_CASE_FIXTURE(fixture, "a new request takes a free slot and the slot's answer completes it") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 2));
  CHECK(sm.number_of_registered_slots() == 2);
  CHECK(sm.number_of_free_slots() == 2);

  CHECK(sm.register_slot_request(request_for(job_a, 1)));
  REQUIRE(actions.allocations.size() == 1);
  CHECK(actions.allocations[0].slot == cluster::slot_id{"task_executor/tm-1", 0});
  CHECK(actions.allocations[0].task_manager == "task_executor/tm-1");
  CHECK(actions.allocations[0].instance == tm1_instance);
  CHECK(sm.number_of_free_slots() == 1);
  CHECK(sm.is_pending(cluster::allocation_id{99, 1}));
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::pending);

  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0}, unit{});
  CHECK_FALSE(sm.is_pending(cluster::allocation_id{99, 1}));
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::allocated);
  CHECK(sm.slot({"task_executor/tm-1", 0})->job == job_a);
  CHECK(sm.slot_of(cluster::allocation_id{99, 1})->id.slot_number == 0);
}

TEST_CASE_FIXTURE(fixture, "a new free slot serves the oldest pending request") {
  CHECK(sm.register_slot_request(request_for(job_a, 1)));
  CHECK(sm.register_slot_request(request_for(job_b, 2)));
  CHECK(actions.allocations.empty());
  CHECK(sm.number_of_pending_requests() == 2);

  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 1));
  REQUIRE(actions.allocations.size() == 1);
  CHECK(actions.allocations[0].request.allocation_id == cluster::allocation_id{99, 1});
  CHECK(sm.number_of_free_slots() == 0);

  sm.register_task_manager(tm2_instance, "task_executor/tm-2", free_slots("task_executor/tm-2", 2));
  REQUIRE(actions.allocations.size() == 2);
  CHECK(actions.allocations[1].request.allocation_id == cluster::allocation_id{99, 2});
  CHECK(actions.allocations[1].slot.owner == "task_executor/tm-2");
  CHECK(sm.number_of_free_slots() == 1);
}

TEST_CASE_FIXTURE(fixture, "a duplicate request is ignored and a withdrawn one frees its slot") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 1));
  CHECK(sm.register_slot_request(request_for(job_a, 1)));
  CHECK_FALSE(sm.register_slot_request(request_for(job_a, 1)));
  CHECK(actions.allocations.size() == 1);
  CHECK(sm.unregister_slot_request(cluster::allocation_id{99, 1}));
  CHECK_FALSE(sm.unregister_slot_request(cluster::allocation_id{99, 1}));
  CHECK(sm.number_of_free_slots() == 1);
  // The TaskExecutor's late answer does not resurrect it.
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0}, unit{});
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::free);
}

TEST_CASE_FIXTURE(fixture, "a failed allocation puts the slot back and retries the request") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 1));
  sm.register_slot_request(request_for(job_a, 1));
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0},
                         make_error(errc::timeout, "no answer"));
  // Retried on the same (only) slot.
  REQUIRE(actions.allocations.size() == 2);
  CHECK(actions.allocations[1].slot == cluster::slot_id{"task_executor/tm-1", 0});
  CHECK(sm.is_pending(cluster::allocation_id{99, 1}));

  // Occupied: the slot counts as taken, the request waits for another one.
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0},
                         make_error(errc::rejected, "occupied"));
  CHECK(actions.allocations.size() == 2);
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::allocated);
  CHECK(sm.is_pending(cluster::allocation_id{99, 1}));
  sm.register_task_manager(tm2_instance, "task_executor/tm-2", free_slots("task_executor/tm-2", 1));
  REQUIRE(actions.allocations.size() == 3);
  CHECK(actions.allocations[2].slot.owner == "task_executor/tm-2");
}

TEST_CASE_FIXTURE(fixture, "slot reports free allocated slots and complete in-flight allocations") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 2));
  sm.register_slot_request(request_for(job_a, 1));
  // A report from before the allocation arrived still shows the slot free: keep waiting.
  sm.report_slot_status(tm1_instance, free_slots("task_executor/tm-1", 2));
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::pending);
  // A report showing it allocated completes the request.
  auto report = free_slots("task_executor/tm-1", 2);
  report.slots[0].allocation = cluster::allocation_id{99, 1};
  report.slots[0].job = job_a;
  sm.report_slot_status(tm1_instance, report);
  CHECK_FALSE(sm.is_pending(cluster::allocation_id{99, 1}));
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::allocated);
  // Freed on the TaskExecutor: free here, and it serves the next request.
  sm.register_slot_request(request_for(job_b, 2)); // takes slot 1
  sm.register_slot_request(request_for(job_b, 3)); // waits
  CHECK(sm.number_of_pending_requests() == 2);
  sm.report_slot_status(tm1_instance, free_slots("task_executor/tm-1", 2));
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::pending);
  CHECK(sm.slot({"task_executor/tm-1", 0})->allocation == cluster::allocation_id{99, 3});
  CHECK(sm.report_slot_status(tm2_instance, {}) == false);
}

TEST_CASE_FIXTURE(fixture, "free_slot frees only the slot held by that allocation") {
  auto report = free_slots("task_executor/tm-1", 1);
  report.slots[0].allocation = cluster::allocation_id{99, 1};
  report.slots[0].job = job_a;
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", report);
  CHECK(sm.number_of_free_slots() == 0);
  CHECK_FALSE(sm.free_slot({"task_executor/tm-1", 0}, cluster::allocation_id{99, 7}));
  CHECK_FALSE(sm.free_slot({"task_executor/tm-9", 0}, cluster::allocation_id{99, 1}));
  CHECK(sm.free_slot({"task_executor/tm-1", 0}, cluster::allocation_id{99, 1}));
  CHECK(sm.number_of_free_slots() == 1);
}

TEST_CASE_FIXTURE(
  fixture,
  "removing a TaskExecutor removes its slots, reports its allocations and retries in-flight requests") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 2));
  sm.register_slot_request(request_for(job_a, 1));
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0}, unit{});
  sm.register_slot_request(request_for(job_b, 2)); // in flight on slot 1
  auto lost = sm.unregister_task_manager(tm1_instance);
  REQUIRE(lost.has_value());
  REQUIRE(lost->size() == 1);
  CHECK((*lost)[0].allocation == cluster::allocation_id{99, 1});
  CHECK((*lost)[0].job == job_a);
  CHECK((*lost)[0].slot == cluster::slot_id{"task_executor/tm-1", 0});
  CHECK(sm.number_of_registered_slots() == 0);
  CHECK(sm.number_of_task_managers() == 0);
  CHECK(sm.is_pending(cluster::allocation_id{99, 2}));
  CHECK_FALSE(sm.assigned_slot(cluster::allocation_id{99, 2}).has_value());
  CHECK(sm.unregister_task_manager(tm1_instance).error().code == errc::not_found);

  sm.register_task_manager(tm2_instance, "task_executor/tm-2", free_slots("task_executor/tm-2", 1));
  CHECK(actions.allocations.back().request.allocation_id == cluster::allocation_id{99, 2});
  CHECK(actions.allocations.back().slot.owner == "task_executor/tm-2");
}

TEST_CASE_FIXTURE(fixture, "a request still pending after slot.request.timeout fails, not before") {
  sm.register_slot_request(request_for(job_a, 1));
  clock.advance(5min - 1ms);
  CHECK(actions.failures.empty());
  clock.advance(1ms);
  REQUIRE(actions.failures.size() == 1);
  CHECK(actions.failures[0].job == job_a);
  CHECK(actions.failures[0].allocation == cluster::allocation_id{99, 1});
  CHECK(actions.failures[0].target == "job_master/" + job_a.to_string());
  CHECK(actions.failures[0].cause.code == errc::timeout);
  CHECK(actions.failures[0].cause.message.find("slot.request.timeout") != std::string::npos);
  CHECK(sm.number_of_pending_requests() == 0);
}

TEST_CASE_FIXTURE(
  fixture,
  "a request fulfilled in time does not time out, and an in-flight one that times out frees its slot") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 1));
  sm.register_slot_request(request_for(job_a, 1));
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0}, unit{});
  sm.free_slot({"task_executor/tm-1", 0}, cluster::allocation_id{99, 1});
  sm.register_slot_request(request_for(job_a, 2)); // in flight, never answered
  clock.advance(5min);
  REQUIRE(actions.failures.size() == 1);
  CHECK(actions.failures[0].allocation == cluster::allocation_id{99, 2});
  CHECK(sm.slot({"task_executor/tm-1", 0})->state == slot_state::free);
}

TEST_CASE_FIXTURE(fixture,
                  "a TaskExecutor idle for resourcemanager.taskmanager-timeout is reported once") {
  sm.register_task_manager(tm1_instance, "task_executor/tm-1", free_slots("task_executor/tm-1", 1));
  CHECK(sm.idle_since(tm1_instance) == clock.now());
  clock.advance(20s);
  // Busy for a while: the idle clock restarts when the slot is freed.
  sm.register_slot_request(request_for(job_a, 1));
  CHECK_FALSE(sm.idle_since(tm1_instance).has_value());
  sm.complete_allocation(cluster::allocation_id{99, 1}, {"task_executor/tm-1", 0}, unit{});
  clock.advance(20s);
  CHECK(actions.releases.empty());
  sm.free_slot({"task_executor/tm-1", 0}, cluster::allocation_id{99, 1});
  clock.advance(30s - 1ms);
  CHECK(actions.releases.empty());
  clock.advance(1ms);
  REQUIRE(actions.releases.size() == 1);
  CHECK(actions.releases[0].instance == tm1_instance);
  CHECK(actions.releases[0].task_manager == "task_executor/tm-1");
  CHECK(actions.releases[0].cause == "TaskExecutor exceeded the idle timeout.");
  clock.advance(10min);
  CHECK(actions.releases.size() == 1);
}

TEST_CASE_FIXTURE(fixture, "a job's pending requests are dropped when its JobMaster leaves") {
  sm.register_slot_request(request_for(job_a, 1));
  sm.register_slot_request(request_for(job_b, 2));
  sm.register_slot_request(request_for(job_a, 3));
  CHECK(sm.unregister_job(job_a) == 2);
  CHECK(sm.number_of_pending_requests() == 1);
  clock.advance(10min);
  CHECK(actions.failures.size() == 1);
}

TEST_CASE("a slot report survives the heartbeat payload encoding, and garbage is refused") {
  cluster::slot_report report = free_slots("task_executor/tm-1", 2);
  report.slots[1].allocation = cluster::allocation_id{5, 6};
  report.slots[1].job = job_a;
  report.slots[1].profile = cluster::resource_profile{1.5, 512};
  auto bytes = encode_slot_report(report);
  auto back = decode_slot_report(bytes);
  REQUIRE(back.has_value());
  CHECK(*back == report);
  std::vector<char> junk{'n', 'o', 't', ' ', 'a', ' ', 's', 'r'};
  CHECK(decode_slot_report(junk).error().code == errc::malformed_message);
}
