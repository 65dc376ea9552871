// The TaskExecutor's slot and job books without actors.

#include <doctest/doctest.h>

#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"

using namespace flint;
using namespace flint::task_executor;

namespace {

const graph::job_id job_a{1, 1};
const graph::job_id job_b{2, 2};
const cluster::allocation_id alloc_1{7, 1};
const cluster::allocation_id alloc_2{7, 2};

graph::execution_attempt_id attempt(int subtask) {
  return graph::execution_attempt_id{{}, graph::job_vertex_id{3, 3}, subtask, 0};
}

} // namespace

TEST_CASE("slots are allocated by index to a job and an allocation, once") {
  task_slot_table t("task_executor/tm-1", 2, cluster::resource_profile{1, 256});
  CHECK(t.number_of_free_slots() == 2);
  CHECK(t.allocate_slot(0, job_a, alloc_1).has_value());
  CHECK(t.is_allocated(0, job_a, alloc_1));
  CHECK_FALSE(t.is_slot_free(0));
  // The same request again is fine; anything else on that slot is refused as occupied.
  CHECK(t.allocate_slot(0, job_a, alloc_1).has_value());
  auto taken = t.allocate_slot(0, job_b, alloc_2);
  REQUIRE_FALSE(taken.has_value());
  CHECK(taken.error().code == errc::rejected);
  CHECK(taken.error().message.find("already been allocated") != std::string::npos);
  // One allocation holds one slot.
  CHECK(t.allocate_slot(1, job_a, alloc_1).error().code == errc::rejected);
  CHECK(t.allocate_slot(2, job_a, alloc_2).error().code == errc::invalid_argument);
  CHECK(t.allocate_slot(-1, job_a, alloc_2).error().code == errc::invalid_argument);
  CHECK(t.has_allocated_slots(job_a));
  CHECK_FALSE(t.has_allocated_slots(job_b));
  CHECK(t.allocations_of(job_a) == std::vector<cluster::allocation_id>{alloc_1});
}

TEST_CASE(
  "allocated slots are offered, accepted ones become active, and tasks need an active slot") {
  task_slot_table t("task_executor/tm-1", 2, {});
  REQUIRE(t.allocate_slot(1, job_a, alloc_1).has_value());
  auto offers = t.offers_for(job_a);
  REQUIRE(offers.size() == 1);
  CHECK(offers[0].allocation == alloc_1);
  CHECK(offers[0].slot_index == 1);

  CHECK(t.add_task(attempt(0), job_a, alloc_1).error().code == errc::illegal_state);
  CHECK(*t.mark_slot_active(alloc_1) == true);
  CHECK(*t.mark_slot_active(alloc_1) == false);
  CHECK(t.offers_for(job_a).empty());
  CHECK(t.add_task(attempt(0), job_a, alloc_1).has_value());
  CHECK(t.add_task(attempt(0), job_a, alloc_1).error().code == errc::rejected);
  CHECK(t.add_task(attempt(1), job_b, alloc_1).error().code == errc::illegal_state);
  CHECK(t.add_task(attempt(1), job_a, alloc_2).error().code == errc::not_found);
  CHECK(t.tasks_of(alloc_1).size() == 1);
  CHECK(t.allocation_of_task(attempt(0)) == alloc_1);
  CHECK(t.mark_slot_active(alloc_2).error().code == errc::not_found);
  CHECK(*t.mark_slot_inactive(alloc_1) == true);
  CHECK(t.try_mark_slot_active(job_a, alloc_1));
  CHECK_FALSE(t.try_mark_slot_active(job_b, alloc_1));
}

TEST_CASE("two jobs of one topology register their subtasks side by side") {
  // Equal job vertex ids, subtask and attempt numbers: only the execution graphs differ.
  auto of_graph = [](std::uint64_t graph) {
    return graph::execution_attempt_id{graph::execution_graph_id{graph, graph},
                                       graph::job_vertex_id{3, 3}, 0, 0};
  };
  task_slot_table t("task_executor/tm-1", 2, {});
  REQUIRE(t.allocate_slot(0, job_a, alloc_1).has_value());
  REQUIRE(t.allocate_slot(1, job_b, alloc_2).has_value());
  REQUIRE(t.mark_slot_active(alloc_1).has_value());
  REQUIRE(t.mark_slot_active(alloc_2).has_value());
  CHECK(t.add_task(of_graph(1), job_a, alloc_1).has_value());
  CHECK(t.add_task(of_graph(2), job_b, alloc_2).has_value());
  CHECK(t.allocation_of_task(of_graph(1)) == alloc_1);
  CHECK(t.allocation_of_task(of_graph(2)) == alloc_2);
  auto again = t.add_task(of_graph(2), job_b, alloc_2);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message == "Task " + of_graph(2).to_string() + " is already registered.");
}

TEST_CASE("a slot with tasks is released when its last task is removed") {
  task_slot_table t("task_executor/tm-1", 1, {});
  REQUIRE(t.allocate_slot(0, job_a, alloc_1).has_value());
  REQUIRE(t.mark_slot_active(alloc_1).has_value());
  REQUIRE(t.add_task(attempt(0), job_a, alloc_1).has_value());
  auto freed = t.free_slot(alloc_1);
  REQUIRE(freed.has_value());
  CHECK_FALSE(freed->has_value());
  CHECK(t.slot(0)->state == task_slot_state::releasing);
  auto removed = t.remove_task(attempt(0));
  REQUIRE(removed.has_value());
  CHECK(removed->allocation == alloc_1);
  CHECK(removed->freed_slot == 0);
  CHECK(t.is_slot_free(0));
  CHECK_FALSE(t.remove_task(attempt(0)).has_value());
  CHECK(t.free_slot(alloc_1).error().code == errc::not_found);
}

TEST_CASE("a free slot is free at once and the slot report shows every slot") {
  task_slot_table t("task_executor/tm-1", 2, cluster::resource_profile{2, 1024});
  REQUIRE(t.allocate_slot(1, job_b, alloc_2).has_value());
  auto report = t.create_slot_report();
  REQUIRE(report.slots.size() == 2);
  CHECK(report.slots[0].id == cluster::slot_id{"task_executor/tm-1", 0});
  CHECK_FALSE(report.slots[0].allocation.has_value());
  CHECK(report.slots[0].profile == cluster::resource_profile{2, 1024});
  CHECK(report.slots[1].allocation == alloc_2);
  CHECK(report.slots[1].job == job_b);
  auto freed = t.free_slot(alloc_2);
  REQUIRE(freed.has_value());
  CHECK(*freed == std::optional<std::int32_t>{1});
  CHECK_FALSE(t.create_slot_report().slots[1].allocation.has_value());
}

TEST_CASE("the job table holds each job's JobMaster connection and its fencing id") {
  job_table jobs;
  auto [e, created] = jobs.get_or_create(job_a, "job_master/a");
  CHECK(created);
  CHECK(e->target_address == "job_master/a");
  CHECK_FALSE(jobs.get_or_create(job_a, "other").second);
  CHECK_FALSE(jobs.job_master_id_of(job_a).has_value());
  rpc::fencing_token jm{4, 2};
  CHECK(jobs.connect(job_a, job_master_connection{jm, "job_master/a", {}}));
  CHECK_FALSE(jobs.connect(job_b, job_master_connection{jm, "job_master/b", {}}));
  CHECK(jobs.job_master_id_of(job_a) == jm);
  CHECK(jobs.job_of_job_master("job_master/a") == job_a);
  auto old = jobs.disconnect(job_a);
  REQUIRE(old.has_value());
  CHECK(old->job_master_id == jm);
  CHECK_FALSE(jobs.job_master_id_of(job_a).has_value());
  CHECK(jobs.remove(job_a));
  CHECK(jobs.size() == 0);
}
