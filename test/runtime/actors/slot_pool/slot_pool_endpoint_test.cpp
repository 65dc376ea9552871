// The SlotPool endpoint message by message on the test coordinator: a fake JobMaster calls it, a
// fake ResourceManager and a fake TaskExecutor record what it sends them.

#include <doctest/doctest.h>

#include <optional>

#include <caf/all.hpp>

#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/slot_pool/slot_pool.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace flint::slot_pool;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;

namespace {

const graph::job_id job{0x10, 0x20};
const cluster::job_master_id jm_token{0x1111, 0x2222};
const cluster::resource_manager_id rm_token{0x3333, 0x4444};
const std::string pool_id = "slot_pool/" + job.to_string();
const std::string jm_id = "job_master/" + job.to_string();
const std::string tm_id = "task_executor/tm-1";

struct pool_fixture : test_fixture {
  rpc::endpoint_directory directory;
  std::vector<resource_manager::request_slot_request> rm_requests;
  std::vector<task_executor::free_slot_request> freed;

  caf::actor jm = spawn<fake_endpoint>(context(jm_id));
  caf::actor rm = spawn<fake_endpoint>(context("resource_manager"), [this](fake_endpoint& self) {
    self.set_token(rm_token);
    self.on<resource_manager::request_slot>(
      rpc::fencing::fenced, [this](resource_manager::request_slot_request r) -> expected<rpc::ack> {
        rm_requests.push_back(r);
        return rpc::ack{};
      });
    self.on<resource_manager::cancel_slot_request>(
      rpc::fencing::fenced,
      [](resource_manager::cancel_slot_request_request) -> expected<rpc::ack> {
        return rpc::ack{};
      });
  });
  caf::actor tm = spawn<fake_endpoint>(context(tm_id), [this](fake_endpoint& self) {
    self.set_token(jm_token);
    self.on<task_executor::free_slot>(
      rpc::fencing::fenced, [this](task_executor::free_slot_request r) -> expected<rpc::ack> {
        freed.push_back(r);
        return rpc::ack{};
      });
  });
  caf::actor pool;

  pool_fixture() {
    directory.put("resource_manager", rm);
    directory.put(tm_id, tm);
    slot_pool_config cfg{5min, 50s, 10s, jm_id, nullptr};
    pool = spawn<slot_pool::slot_pool>(context(pool_id), job, jm_token, cfg, &directory);
    directory.put(pool_id, pool);
    run();
  }

  rpc::gateway pool_gw(cluster::job_master_id token = jm_token) const {
    return rpc::gateway(pool, pool_id, token);
  }

  /// Asks the pool from the fake JobMaster; the answer lands in `out`.
  template <class M>
  void ask(const typename M::request& req, std::optional<expected<typename M::response>>& out,
           cluster::job_master_id token = jm_token) {
    auto gw = pool_gw(token);
    // The JobMaster waits longer than slot.request.timeout for a slot: the pool answers first.
    in_main_thread<fake_endpoint>(jm, [gw, req, &out](fake_endpoint& self) {
      gw.ask<M>(
        self, req, [&out](expected<typename M::response> r) { out = std::move(r); }, 1h);
    });
    run();
  }

  template <class M>
  expected<typename M::response> call(const typename M::request& req,
                                      cluster::job_master_id token = jm_token) {
    std::optional<expected<typename M::response>> out;
    ask<M>(req, out, token);
    REQUIRE(out.has_value());
    return std::move(*out);
  }

  const slot_pool_state& state() { return deref<slot_pool::slot_pool>(pool).state(); }

  cluster::task_manager_location location() const { return {tm_id, "localhost", 0}; }
};

const slot_request_id r1{5, 1};

} // namespace

TEST_CASE_FIXTURE(
  pool_fixture,
  "a slot request made before any resource manager is known waits and is served once one connects") {
  std::optional<expected<allocated_slot>> slot;
  ask<allocate_slot>(allocate_slot_request{r1, {}, true}, slot);
  CHECK(!slot.has_value());
  CHECK(rm_requests.empty());
  CHECK(state().waiting_for_resource_manager_count() == 1);

  auto connected = call<connect_to_resource_manager>({rm_token, "resource_manager"});
  CHECK(connected.has_value());
  REQUIRE(rm_requests.size() == 1);
  CHECK(rm_requests[0].job_master_id == jm_token);
  CHECK(rm_requests[0].request.job_id == job);
  CHECK(rm_requests[0].request.target_address == jm_id);
  CHECK(!slot.has_value());

  CHECK(call<register_task_manager>({tm_id}).has_value());
  auto allocation = rm_requests[0].request.allocation_id;
  auto accepted = call<offer_slots>({location(), tm_id, {cluster::slot_offer{allocation, 0, {}}}});
  REQUIRE(accepted.has_value());
  CHECK(accepted->accepted.size() == 1);
  REQUIRE(slot.has_value());
  REQUIRE(slot->has_value());
  CHECK((*slot)->allocation_id == allocation);
  CHECK((*slot)->task_executor_address == tm_id);

  using trace::direction;
  CHECK(flint::test::contains_in_order(trace(),
                                       {{direction::receive, "allocate_slot"},
                                        {direction::receive, "connect_to_resource_manager"},
                                        {direction::send, "request_slot"},
                                        {direction::receive, "offer_slots"},
                                        {direction::reply, "allocate_slot"}}));
}

TEST_CASE_FIXTURE(pool_fixture, "a call carrying an old JobMasterId is refused and not executed") {
  cluster::job_master_id old_token{0x9999, 0x9999};
  auto refused = call<connect_to_resource_manager>({rm_token, "resource_manager"}, old_token);
  REQUIRE(!refused.has_value());
  CHECK(refused.error().code == errc::fencing_token_mismatch);
  CHECK(refused.error().message.find(old_token.to_string()) != std::string::npos);
  CHECK(refused.error().message.find(jm_token.to_string()) != std::string::npos);
  CHECK(!state().resource_manager_connected());
  auto alloc = call<allocate_slot>(allocate_slot_request{r1, {}, true}, old_token);
  CHECK(alloc.error().code == errc::fencing_token_mismatch);
  CHECK(state().waiting_for_resource_manager_count() == 0);
}

TEST_CASE_FIXTURE(pool_fixture,
                  "a pending request fails with a clear time-out after slot.request.timeout") {
  CHECK(call<connect_to_resource_manager>({rm_token, "resource_manager"}).has_value());
  std::optional<expected<allocated_slot>> slot;
  ask<allocate_slot>(allocate_slot_request{r1, {}, true}, slot);
  REQUIRE(rm_requests.size() == 1);
  advance(299s);
  CHECK(!slot.has_value());
  advance(1s);
  REQUIRE(slot.has_value());
  REQUIRE(!slot->has_value());
  CHECK(slot->error().code == errc::timeout);
  CHECK(slot->error().message.find("slot request timeout of 300000 ms") != std::string::npos);
  CHECK(state().pending_count() == 0);
}

TEST_CASE_FIXTURE(pool_fixture,
                  "a released slot stays available and is freed at its task executor once idle") {
  CHECK(call<connect_to_resource_manager>({rm_token, "resource_manager"}).has_value());
  std::optional<expected<allocated_slot>> slot;
  ask<allocate_slot>(allocate_slot_request{r1, {}, true}, slot);
  CHECK(call<register_task_manager>({tm_id}).has_value());
  auto allocation = rm_requests[0].request.allocation_id;
  CHECK(
    call<offer_slots>({location(), tm_id, {cluster::slot_offer{allocation, 0, {}}}}).has_value());
  REQUIRE(slot.has_value());
  CHECK(call<release_slot>({r1, "done"}).has_value());
  CHECK(state().available_count() == 1);
  // Idle checks run every 50 s: the slot has been idle since t = 0, so the first check frees it.
  advance(49s);
  CHECK(freed.empty());
  advance(1s);
  REQUIRE(freed.size() == 1);
  CHECK(freed[0].allocation_id == allocation);
  CHECK(freed[0].job_id == job);
  CHECK(freed[0].cause == "Releasing idle slot.");
  CHECK(state().available_count() == 0);
}

TEST_CASE_FIXTURE(pool_fixture, "releasing a task executor frees its slots there") {
  CHECK(call<connect_to_resource_manager>({rm_token, "resource_manager"}).has_value());
  std::optional<expected<allocated_slot>> slot;
  ask<allocate_slot>(allocate_slot_request{r1, {}, true}, slot);
  CHECK(call<register_task_manager>({tm_id}).has_value());
  auto allocation = rm_requests[0].request.allocation_id;
  CHECK(
    call<offer_slots>({location(), tm_id, {cluster::slot_offer{allocation, 0, {}}}}).has_value());
  CHECK(call<release_task_manager>({tm_id, "job finished", true}).has_value());
  REQUIRE(freed.size() == 1);
  CHECK(freed[0].cause == "job finished");
  CHECK(state().allocated_count() == 0);
}

TEST_CASE_FIXTURE(pool_fixture, "a task executor released on a disconnect keeps the slot it "
                                "re-offers after reconnecting") {
  // Seen in a run under a ZooKeeper flap: the JobMaster disconnected the TaskManager, the pool
  // sent free_slot for its slot, the TaskExecutor reconnected and re-offered the slot (accepted),
  // and then the free_slot arrived and freed the slot the pool held: the next deployment there
  // failed. The pool sends nothing on a disconnect (the JobMaster's disconnect_job_manager does,
  // ordered with its later messages to the TaskExecutor).
  CHECK(call<connect_to_resource_manager>({rm_token, "resource_manager"}).has_value());
  std::optional<expected<allocated_slot>> slot;
  ask<allocate_slot>(allocate_slot_request{r1, {}, true}, slot);
  CHECK(call<register_task_manager>({tm_id}).has_value());
  auto allocation = rm_requests[0].request.allocation_id;
  cluster::slot_offer offered{allocation, 0, {}};
  CHECK(call<offer_slots>({location(), tm_id, {offered}}).has_value());
  REQUIRE(slot.has_value());
  CHECK(call<release_task_manager>({tm_id, "TaskManager disconnected", false}).has_value());
  CHECK(freed.empty());
  CHECK(call<register_task_manager>({tm_id}).has_value());
  auto accepted = call<offer_slots>({location(), tm_id, {offered}});
  REQUIRE(accepted.has_value());
  CHECK(accepted->accepted.size() == 1);
  CHECK(freed.empty());
  CHECK(state().available_count() + state().allocated_count() == 1);
}
