// The SlotPool's logic without actors: parked requests, allocation-id matching, idle slots,
// request time-outs and TaskExecutor loss, with a recording stand-in for the gateways.

#include <doctest/doctest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "runtime/actors/slot_pool/slot_pool_state.hpp"

using namespace flint;
using namespace flint::slot_pool;
using namespace std::chrono_literals;

namespace {

struct recording_actions : slot_pool_actions {
  struct rm_request {
    slot_request_id request;
    cluster::allocation_id allocation;
  };
  std::vector<rm_request> rm_requests;
  std::vector<cluster::allocation_id> rm_cancels;
  std::vector<std::pair<allocated_slot, std::string>> freed;
  std::vector<std::pair<slot_request_id, expected<allocated_slot>>> completed;

  void request_slot_from_resource_manager(const slot_request_id& request,
                                          const cluster::allocation_id& allocation,
                                          const cluster::resource_profile&) override {
    rm_requests.push_back({request, allocation});
  }
  void cancel_slot_request_at_resource_manager(const cluster::allocation_id& allocation) override {
    rm_cancels.push_back(allocation);
  }
  void free_slot_at_task_executor(const allocated_slot& slot, const std::string& cause) override {
    freed.emplace_back(slot, cause);
  }
  void complete_request(const slot_request_id& request, expected<allocated_slot> result) override {
    completed.emplace_back(request, std::move(result));
  }
};

struct pool_fixture {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
    std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100);
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>("slot_pool", sink);
  recording_actions actions;
  slot_pool_state pool{graph::job_id{1, 2}, slot_pool_settings{5min, 50s}, actions, logger, 42};
  time_point t0{};
  cluster::task_manager_location tm1{"task_executor/tm-1", "localhost", 0};
  cluster::task_manager_location tm2{"task_executor/tm-2", "localhost", 0};

  pool_fixture() { logger->set_pattern("%v"); }

  bool logged(const std::string& text) const {
    for (auto& line : sink->last_formatted())
      if (line.find(text) != std::string::npos)
        return true;
    return false;
  }
  static cluster::slot_offer offer(cluster::allocation_id a, int index) {
    return cluster::slot_offer{a, index, {}};
  }
};

const slot_request_id r1{7, 1};
const slot_request_id r2{7, 2};
const slot_request_id r3{7, 3};

} // namespace

TEST_CASE_FIXTURE(
  pool_fixture,
  "a request made before any resource manager is known waits and is sent once one connects") {
  pool.allocate(r1, {}, true, t0);
  CHECK(actions.rm_requests.empty());
  CHECK(pool.waiting_for_resource_manager_count() == 1);
  CHECK(
    logged("Cannot serve slot request, no ResourceManager connected. Adding as pending request "
           "[SlotRequestId{00000000000000070000000000000001}]"));
  pool.connect_resource_manager();
  REQUIRE(actions.rm_requests.size() == 1);
  CHECK(actions.rm_requests[0].request == r1);
  CHECK(pool.waiting_for_resource_manager_count() == 0);
  CHECK(pool.pending_count() == 1);
  CHECK(
    logged("Requesting new slot [SlotRequestId{00000000000000070000000000000001}] and profile"));
  CHECK(logged("from resource manager."));
  // Served once the TaskExecutor offers the slot the RM assigned.
  pool.register_task_manager(tm1.id);
  auto accepted = pool.offer_slots(tm1, tm1.id, {offer(actions.rm_requests[0].allocation, 0)}, t0);
  CHECK(accepted.size() == 1);
  REQUIRE(actions.completed.size() == 1);
  REQUIRE(actions.completed[0].second.has_value());
  CHECK(actions.completed[0].second->allocation_id == actions.rm_requests[0].allocation);
  CHECK(actions.completed[0].second->task_executor_address == tm1.id);
  CHECK(pool.allocated_count() == 1);
}

TEST_CASE_FIXTURE(pool_fixture, "offers are matched to requests by allocation id") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  pool.allocate(r2, {}, true, t0);
  REQUIRE(actions.rm_requests.size() == 2);
  auto a1 = actions.rm_requests[0].allocation;
  auto a2 = actions.rm_requests[1].allocation;
  CHECK(a1 != a2);
  pool.register_task_manager(tm1.id);
  // The slot for the second request arrives first: it goes to the second request.
  pool.offer_slots(tm1, tm1.id, {offer(a2, 1)}, t0);
  REQUIRE(actions.completed.size() == 1);
  CHECK(actions.completed[0].first == r2);
  CHECK(actions.completed[0].second->allocation_id == a2);
  CHECK(actions.completed[0].second->slot_index == 1);
  pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0);
  REQUIRE(actions.completed.size() == 2);
  CHECK(actions.completed[1].first == r1);
  CHECK(actions.completed[1].second->allocation_id == a1);
}

TEST_CASE_FIXTURE(
  pool_fixture,
  "an offer nobody asked for serves another pending request, then the late slot becomes available") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  auto a1 = actions.rm_requests[0].allocation;
  pool.register_task_manager(tm1.id);
  cluster::allocation_id stray{99, 99};
  CHECK(pool.offer_slots(tm1, tm1.id, {offer(stray, 0)}, t0).size() == 1);
  REQUIRE(actions.completed.size() == 1);
  CHECK(actions.completed[0].first == r1);
  CHECK(actions.completed[0].second->allocation_id == stray);
  CHECK(pool.pending_count() == 0);
  // The RM's slot for r1 still comes: nobody waits, so it is available.
  CHECK(pool.offer_slots(tm1, tm1.id, {offer(a1, 1)}, t0).size() == 1);
  CHECK(pool.available_count() == 1);
  CHECK(pool.allocated_count() == 1);
  // The next request takes it at once, without asking the RM.
  pool.allocate(r2, {}, true, t0);
  CHECK(actions.rm_requests.size() == 1);
  REQUIRE(actions.completed.size() == 2);
  CHECK(actions.completed[1].second->allocation_id == a1);
}

TEST_CASE_FIXTURE(
  pool_fixture,
  "offers from an unregistered task executor and conflicting allocation ids are refused") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  auto a1 = actions.rm_requests[0].allocation;
  CHECK(pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0).empty());
  CHECK(actions.completed.empty());
  pool.register_task_manager(tm1.id);
  pool.register_task_manager(tm2.id);
  CHECK(pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0).size() == 1);
  // The same offer again is accepted again; the same allocation id from another slot is not.
  CHECK(pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0).size() == 1);
  CHECK(pool.offer_slots(tm2, tm2.id, {offer(a1, 0)}, t0).empty());
  CHECK(actions.completed.size() == 1);
}

TEST_CASE_FIXTURE(pool_fixture,
                  "an idle available slot is freed at its task executor after the idle timeout") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  auto a1 = actions.rm_requests[0].allocation;
  pool.register_task_manager(tm1.id);
  pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0);
  pool.release(r1, "done", t0 + 10s);
  CHECK(pool.available_count() == 1);
  CHECK(pool.check_idle_slots(t0 + 59s) == 0);
  CHECK(actions.freed.empty());
  CHECK(pool.check_idle_slots(t0 + 60s) == 1);
  REQUIRE(actions.freed.size() == 1);
  CHECK(actions.freed[0].first.allocation_id == a1);
  CHECK(actions.freed[0].second == "Releasing idle slot.");
  CHECK(pool.available_count() == 0);
}

TEST_CASE_FIXTURE(pool_fixture, "a slot released while a request is parked serves that request") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  auto a1 = actions.rm_requests[0].allocation;
  pool.register_task_manager(tm1.id);
  pool.offer_slots(tm1, tm1.id, {offer(a1, 0)}, t0);
  pool.allocate(r2, {}, true, t0);
  CHECK(pool.pending_count() == 1);
  pool.release(r1, "done", t0);
  REQUIRE(actions.completed.size() == 2);
  CHECK(actions.completed[1].first == r2);
  CHECK(actions.completed[1].second->allocation_id == a1);
}

TEST_CASE_FIXTURE(
  pool_fixture, "a request nobody serves fails after the slot request timeout with a clear error") {
  auto generation = pool.allocate(r1, {}, true, t0);
  REQUIRE(generation != 0);
  pool.check_request_timeout(r1, generation + 1); // a stale timer does nothing
  CHECK(actions.completed.empty());
  pool.check_request_timeout(r1, generation);
  REQUIRE(actions.completed.size() == 1);
  REQUIRE(!actions.completed[0].second.has_value());
  const auto& err = actions.completed[0].second.error();
  CHECK(err.code == errc::timeout);
  CHECK(err.message.find("slot request timeout of 300000 ms") != std::string::npos);
  CHECK(pool.waiting_for_resource_manager_count() == 0);
  // Sent requests are also withdrawn at the RM.
  pool.connect_resource_manager();
  auto g2 = pool.allocate(r2, {}, true, t0);
  pool.check_request_timeout(r2, g2);
  CHECK(actions.rm_cancels.size() == 1);
  CHECK(actions.completed.back().second.error().code == errc::timeout);
}

TEST_CASE_FIXTURE(pool_fixture,
                  "releasing a task executor removes its slots and names their users; it frees "
                  "them there only when the job is over") {
  for (bool job_over : {false, true}) {
    CAPTURE(job_over);
    pool.connect_resource_manager();
    pool.allocate(r1, {}, true, t0);
    pool.allocate(r2, {}, true, t0);
    pool.register_task_manager(tm1.id);
    pool.offer_slots(tm1, tm1.id, {offer(actions.rm_requests.end()[-2].allocation, 0)}, t0);
    pool.offer_slots(tm1, tm1.id, {offer(actions.rm_requests.end()[-1].allocation, 1)}, t0);
    pool.release(r2, "done", t0);
    actions.freed.clear();
    auto users = pool.release_task_manager(tm1.id, "TaskExecutor lost", job_over);
    CHECK(users == std::vector<slot_request_id>{r1});
    CHECK(actions.freed.size() == (job_over ? 2U : 0U));
    CHECK(pool.allocated_count() == 0);
    CHECK(pool.available_count() == 0);
    CHECK(!pool.is_registered(tm1.id));
  }
}

TEST_CASE_FIXTURE(
  pool_fixture,
  "a failed resource manager request or allocation fails its request, suspend fails the rest") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  pool.allocate(r2, {}, true, t0);
  pool.allocate(r3, {}, true, t0);
  pool.resource_manager_request_failed(r1, actions.rm_requests[0].allocation,
                                       make_error(errc::fencing_token_mismatch, "old leader"));
  REQUIRE(actions.completed.size() == 1);
  CHECK(actions.completed[0].second.error().code == errc::fencing_token_mismatch);
  CHECK(pool.fail_allocation(actions.rm_requests[1].allocation, "TE refused") == std::nullopt);
  REQUIRE(actions.completed.size() == 2);
  CHECK(actions.completed[1].first == r2);
  pool.suspend();
  REQUIRE(actions.completed.size() == 3);
  CHECK(actions.completed[2].first == r3);
  CHECK(!pool.resource_manager_connected());
}

TEST_CASE_FIXTURE(pool_fixture,
                  "a request without queueing fails at once when no slot is available") {
  pool.allocate(r1, {}, false, t0);
  REQUIRE(actions.completed.size() == 1);
  CHECK(actions.completed[0].second.error().code == errc::rejected);
  pool.allocate(r2, {}, true, t0);
  pool.allocate(r2, {}, true, t0);
  CHECK(actions.completed.back().second.error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(
  pool_fixture,
  "requests sent to an earlier resource manager connection are sent again with the same allocation id") {
  pool.connect_resource_manager();
  pool.allocate(r1, {}, true, t0);
  pool.disconnect_resource_manager();
  pool.allocate(r2, {}, true, t0);
  REQUIRE(actions.rm_requests.size() == 1);
  pool.connect_resource_manager();
  REQUIRE(actions.rm_requests.size() == 3);
  CHECK(actions.rm_requests[1].request == r1);
  CHECK(actions.rm_requests[1].allocation == actions.rm_requests[0].allocation);
  CHECK(actions.rm_requests[2].request == r2);
  // The slot of the first allocation still serves r1.
  pool.register_task_manager(tm1.id);
  pool.offer_slots(tm1, tm1.id, {offer(actions.rm_requests[0].allocation, 0)}, t0);
  REQUIRE(actions.completed.size() == 1);
  CHECK(actions.completed[0].first == r1);
}
