// The real ResourceManager and TaskExecutor together with a fake JobMaster, on the deterministic
// scheduler: the slot flow of the reference's §6.1 message by message, leadership changes, and a
// TaskExecutor that goes away.

#include <doctest/doctest.h>

#include <memory>
#include <optional>

#include <caf/all.hpp>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task_executor.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"
#include "test/support/test_fixture.hpp"

using namespace flint;
using namespace std::chrono_literals;
using flint::test::fake_endpoint;
using flint::test::test_fixture;
using trace::direction;
namespace te = flint::task_executor;
namespace rm = flint::resource_manager;
namespace jm = flint::job_master;

namespace {

struct recording_contender : leader::leader_contender {
  rpc::fencing_token granted;
  void grant_leadership(const rpc::fencing_token& id) override { granted = id; }
  void revoke_leadership() override { granted = {}; }
  std::string description() const override { return "fake JobMaster"; }
};

const graph::job_id job_a{0xa, 1};
const std::string rm_name = "resource_manager";
const std::string te_name = "task_executor/tm-1";
const std::string jm_name = "job_master/" + job_a.to_string();

struct jm_log {
  caf::actor rm;
  rpc::fencing_token rm_token;
  std::vector<jm::offer_slots_request> offers;
  std::vector<cluster::task_execution_state> states;
  std::vector<jm::disconnect_task_manager_request> lost_task_managers;
};

struct flow_fixture : test_fixture {
  leader::embedded_ha_services ha{21};
  rpc::endpoint_directory directory;
  std::unique_ptr<leader::leader_election_service> rm_election = ha.resource_manager_election();
  std::unique_ptr<leader::leader_election_service> jm_election = ha.job_master_election(job_a);
  recording_contender jm_contender;
  std::shared_ptr<jm_log> seen = std::make_shared<jm_log>();
  caf::actor rm;
  caf::actor tm;
  caf::actor jm;

  flow_fixture() {
    rm::resource_manager_config rcfg;
    rm = spawn<rm::resource_manager>(context(rm_name), rcfg,
                                     rm::resource_manager_services{rm_election.get(), &directory});
    run();
    seen->rm = rm;
    seen->rm_token = rm_token();

    te::task_executor_config tcfg;
    tcfg.resource_id = te_name;
    tcfg.number_of_slots = 2;
    tcfg.detached_tasks = false;
    tm = spawn<te::task_executor>(
      context(te_name), tcfg,
      te::task_executor_services{&ha, &directory,
                                 te::make_invokable_factory<te::noop_invokable>(), {}, {}, {}});
    run();

    jm_election->start(jm_contender);
    auto token = jm_contender.granted;
    auto log = seen;
    jm = spawn<fake_endpoint>(context(jm_name), [token, log](fake_endpoint& self) {
      self.set_token(token);
      using rpc::fencing;
      self.on<jm::register_task_manager>(
        fencing::fenced,
        [](jm::register_task_manager_request) -> expected<jm::task_manager_registration_response> {
          return jm::task_manager_registration_response{
            jm::task_manager_registration_success{jm_name}};
        });
      self.on<jm::offer_slots>(
        fencing::fenced, [log](jm::offer_slots_request req) -> expected<jm::offer_slots_response> {
          log->offers.push_back(req);
          return jm::offer_slots_response{req.offers};
        });
      self.on<jm::update_task_execution_state>(
        fencing::fenced, [log](cluster::task_execution_state s) -> expected<rpc::ack> {
          log->states.push_back(s);
          return rpc::ack{};
        });
      self.on<jm::heartbeat_from_resource_manager>(
        fencing::unfenced, [log, &self](heartbeat::heartbeat_request) -> expected<rpc::ack> {
          rpc::gateway(log->rm, rm_name, log->rm_token)
            .tell<rm::heartbeat_from_job_manager>(self, heartbeat::heartbeat_request{jm_name, {}});
          return rpc::ack{};
        });
      self.on<jm::heartbeat_from_task_manager>(
        fencing::fenced,
        [](heartbeat::heartbeat_request) -> expected<rpc::ack> { return rpc::ack{}; });
      self.on<jm::disconnect_task_manager>(
        fencing::fenced, [log](jm::disconnect_task_manager_request req) -> expected<rpc::ack> {
          log->lost_task_managers.push_back(req);
          return rpc::ack{};
        });
    });
    run();
    jm_election->confirm_leadership(token, leader::leader_address{jm_name, jm, {}, 0});
    run();
  }

  ~flow_fixture() {
    for (auto* a : {&tm, &jm, &rm})
      caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    run();
  }

  rpc::fencing_token rm_token() { return ha.resource_manager_leadership().current_session_id(); }
  rpc::fencing_token jm_token() const { return jm_contender.granted; }
  rm::resource_manager& rmx() { return deref<rm::resource_manager>(rm); }
  te::task_executor& tex() { return deref<te::task_executor>(tm); }

  template <class M>
  expected<typename M::response> ask(const caf::actor& from, rpc::gateway gw,
                                     typename M::request req) {
    std::optional<expected<typename M::response>> result;
    in_main_thread<fake_endpoint>(from, [&, gw, req](fake_endpoint& self) {
      gw.ask<M>(self, req, [&](expected<typename M::response> r) { result.emplace(std::move(r)); });
    });
    run();
    REQUIRE(result.has_value());
    return *result;
  }

  void register_job_master() {
    auto r = ask<rm::register_job_manager>(
      jm, rpc::gateway(rm, rm_name, rm_token()),
      rm::job_master_registration_request{jm_token(), jm_name, jm_name, job_a});
    REQUIRE(r.has_value());
    REQUIRE(std::holds_alternative<rm::job_master_registration_success>(*r));
  }

  expected<rpc::ack> request_slot(std::uint64_t n) {
    return ask<rm::request_slot>(
      jm, rpc::gateway(rm, rm_name, rm_token()),
      rm::request_slot_request{
        jm_token(), rm::slot_request{job_a, cluster::allocation_id{0xa11, n}, {}, jm_name}});
  }

  expected<rpc::ack> submit(int subtask, std::uint64_t allocation) {
    graph::task_deployment_descriptor tdd;
    tdd.job_id = job_a;
    tdd.job_vertex_id = graph::job_vertex_id{0xbeef, 1};
    tdd.task_name = "Source: noop (" + std::to_string(subtask + 1) + "/2)";
    tdd.subtask_index = subtask;
    tdd.parallelism = 2;
    return ask<te::submit_task>(
      jm, rpc::gateway(tm, te_name, jm_token(), job_a.to_string()),
      te::submit_task_request{tdd, jm_token(), cluster::allocation_id{0xa11, allocation}});
  }
};

} // namespace

TEST_CASE_FIXTURE(
  flow_fixture, "the slot flow of section 6.1 runs message by message between the real RM and TE") {
  // The TaskExecutor found the RM leader, registered and reported its two free slots.
  CHECK(tex().is_connected_to_resource_manager());
  CHECK(rmx().slots()->number_of_free_slots() == 2);

  register_job_master();
  CHECK(request_slot(1).has_value());
  CHECK(request_slot(2).has_value());

  // Both slots went to the job and were accepted by its JobMaster.
  CHECK(rmx().slots()->number_of_free_slots() == 0);
  CHECK(rmx().slots()->number_of_pending_requests() == 0);
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::active);
  CHECK(tex().slot_table().slot(1)->state == te::task_slot_state::active);
  int offered = 0;
  for (auto& o : seen->offers)
    offered += static_cast<int>(o.offers.size());
  CHECK(offered >= 2);

  CHECK(submit(0, 1).has_value());
  CHECK(submit(1, 2).has_value());
  int finished = 0;
  for (auto& s : seen->states)
    finished += s.state == graph::execution_state::finished ? 1 : 0;
  CHECK(finished == 2);

  CHECK(test::contains_in_order(trace(),
                                {{direction::send, "register_task_executor"},
                                 {direction::receive, "register_task_executor"},
                                 {direction::receive, "send_slot_report"},
                                 {direction::receive, "register_job_manager"},
                                 {direction::receive, "request_slot"},
                                 {direction::send, "request_slot"},
                                 {direction::send, "register_task_manager"},
                                 {direction::receive, "register_task_manager"},
                                 {direction::send, "offer_slots"},
                                 {direction::receive, "offer_slots"},
                                 {direction::receive, "submit_task"},
                                 {direction::send, "update_task_execution_state"},
                                 {direction::receive, "update_task_execution_state"}}));
}

TEST_CASE_FIXTURE(
  flow_fixture,
  "after a ResourceManager leadership change the TaskExecutor registers under the new id and refuses the old one") {
  auto old = rm_token();
  ha.resource_manager_leadership().revoke_and_regrant();
  run();
  auto fresh = rm_token();
  REQUIRE_FALSE(fresh.is_nil());
  CHECK(fresh != old);
  CHECK(rmx().token() == fresh);
  CHECK(tex().is_connected_to_resource_manager());
  CHECK(tex().resource_manager_id() == fresh);
  CHECK(rmx().slots()->number_of_registered_slots() == 2);

  auto refused = ask<te::request_slot>(
    jm, rpc::gateway(tm, te_name, old, te::rm_scope),
    te::request_slot_request{
      cluster::slot_id{te_name, 0}, job_a, cluster::allocation_id{0xa11, 9}, {}, jm_name, old});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::fencing_token_mismatch);
  CHECK(tex().slot_table().is_slot_free(0));
}

TEST_CASE_FIXTURE(
  flow_fixture,
  "a TaskExecutor that goes away loses its slots at the RM, and the JobMaster is told") {
  register_job_master();
  seen->rm_token = rm_token();
  CHECK(request_slot(1).has_value());
  CHECK(rmx().slots()->number_of_registered_slots() == 2);
  caf::anon_send_exit(tm, caf::exit_reason::kill);
  run();
  // On its way out it tells the RM and the JobMaster itself (and heartbeat requests to it fail,
  // so after heartbeat.timeout at the latest the RM would drop it anyway); the RM tells the
  // JobMaster too.
  for (int i = 0; i < 60; ++i)
    advance(1s);
  CHECK_FALSE(rmx().is_registered_task_executor(te_name));
  CHECK(rmx().slots()->number_of_registered_slots() == 0);
  REQUIRE_FALSE(seen->lost_task_managers.empty());
  for (const auto& lost : seen->lost_task_managers)
    CHECK(lost.resource_id == te_name);
}

TEST_CASE_FIXTURE(
  flow_fixture,
  "heartbeats between the real RM and TE keep them connected and carry the slot report") {
  for (int i = 0; i < 120; ++i)
    advance(1s);
  CHECK(tex().is_connected_to_resource_manager());
  CHECK(rmx().is_registered_task_executor(te_name));
  CHECK(rmx().slots()->number_of_free_slots() == 2);
  int requests = 0;
  int answers = 0;
  for (auto& r : trace()) {
    if (r.dir == direction::receive && r.method == "heartbeat_from_resource_manager"
        && r.result == trace::outcome::ok)
      ++requests;
    if (r.dir == direction::receive && r.method == "heartbeat_from_task_manager"
        && r.result == trace::outcome::ok)
      ++answers;
  }
  CHECK(requests >= 11);
  CHECK(answers == requests);
}
