// The TaskExecutor driven message by message on the deterministic scheduler, against a fake
// ResourceManager and a fake JobMaster (endpoints built from lambdas) that lead through the
// embedded HA services.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <memory>
#include <optional>
#include <random>

#include <caf/all.hpp>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task.hpp"
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

/// Takes the leadership it is granted (synchronously, from the embedded election).
struct recording_contender : leader::leader_contender {
  rpc::fencing_token granted;
  void grant_leadership(const rpc::fencing_token& id) override { granted = id; }
  void revoke_leadership() override { granted = {}; }
  std::string description() const override { return "test contender"; }
};

const graph::job_id job_a{0xa, 1};
const std::string te_id = "task_executor/tm-1";
const std::string rm_id_text = "resource_manager";
const std::string jm_address = "job_master/" + job_a.to_string();

/// What the fake ResourceManager saw.
struct rm_log {
  std::vector<rm::task_executor_registration_request> registrations;
  std::vector<rm::send_slot_report_request> reports;
  std::vector<rm::notify_slot_available_request> available;
  std::vector<rm::disconnect_task_manager_request> disconnects;
  int heartbeats = 0;
};

/// What the fake JobMaster saw, and how it answers offers.
struct jm_log {
  std::vector<jm::register_task_manager_request> registrations;
  std::vector<jm::offer_slots_request> offers;
  std::vector<cluster::task_execution_state> states;
  std::vector<jm::disconnect_task_manager_request> disconnects;
  std::vector<jm::acknowledge_checkpoint_request> acknowledged;
  std::vector<jm::decline_checkpoint_request> declined;
  bool accept_offers = true;
  /// Called as each offer arrives (in the test's thread).
  std::function<void()> on_offer;
};

graph::task_deployment_descriptor tdd_for(int subtask) {
  graph::task_deployment_descriptor tdd;
  tdd.job_id = job_a;
  tdd.job_vertex_id = graph::job_vertex_id{0xbeef, 7};
  tdd.task_name = "Map (" + std::to_string(subtask + 1) + "/2)";
  tdd.subtask_index = subtask;
  tdd.parallelism = 2;
  return tdd;
}

graph::execution_attempt_id attempt_for(int subtask) {
  return graph::execution_attempt_id{{}, graph::job_vertex_id{0xbeef, 7}, subtask, 0};
}

struct te_fixture : test_fixture {
  leader::embedded_ha_services ha{7};
  rpc::endpoint_directory directory;
  recording_contender rm_contender;
  recording_contender jm_contender;
  std::unique_ptr<leader::leader_election_service> rm_election = ha.resource_manager_election();
  std::unique_ptr<leader::leader_election_service> jm_election = ha.job_master_election(job_a);
  std::shared_ptr<rm_log> rm_seen = std::make_shared<rm_log>();
  std::shared_ptr<jm_log> jm_seen = std::make_shared<jm_log>();
  caf::actor rm;
  caf::actor jm;
  caf::actor tm;
  te::invokable_factory invokables = te::make_invokable_factory<te::noop_invokable>();
  /// A stand-in for the shuffle: the jobs with blocking partitions here, and what was released.
  std::set<graph::job_id> held_partitions;
  std::vector<graph::job_id> released_jobs;
  std::vector<graph::intermediate_result_partition_id> released_partitions;

  rpc::fencing_token rm_token() const { return rm_contender.granted; }
  rpc::fencing_token jm_token() const { return jm_contender.granted; }

  te_fixture() {
    rm_election->start(rm_contender);
    jm_election->start(jm_contender);
    auto token = rm_token();
    auto seen = rm_seen;
    rm = spawn<fake_endpoint>(context(rm_id_text), [token, seen](fake_endpoint& self) {
      self.set_token(token);
      using rpc::fencing;
      self.on<rm::register_task_executor>(
        fencing::fenced,
        [seen](rm::task_executor_registration_request req)
          -> expected<rm::task_executor_registration_response> {
          seen->registrations.push_back(req);
          return rm::task_executor_registration_response{
            rm::task_executor_registration_success{cluster::instance_id{1, 2}, rm_id_text, 10000}};
        });
      self.on<rm::send_slot_report>(fencing::fenced,
                                    [seen](rm::send_slot_report_request req) -> expected<rpc::ack> {
                                      seen->reports.push_back(req);
                                      return rpc::ack{};
                                    });
      self.on<rm::notify_slot_available>(
        fencing::fenced, [seen](rm::notify_slot_available_request req) -> expected<rpc::ack> {
          seen->available.push_back(req);
          return rpc::ack{};
        });
      self.on<rm::disconnect_task_manager>(
        fencing::fenced, [seen](rm::disconnect_task_manager_request req) -> expected<rpc::ack> {
          seen->disconnects.push_back(req);
          return rpc::ack{};
        });
      self.on<rm::heartbeat_from_task_manager>(
        fencing::fenced, [seen](heartbeat::heartbeat_request) -> expected<rpc::ack> {
          ++seen->heartbeats;
          return rpc::ack{};
        });
    });
    auto jm_tok = jm_token();
    auto jseen = jm_seen;
    jm = spawn<fake_endpoint>(context(jm_address), [jm_tok, jseen](fake_endpoint& self) {
      self.set_token(jm_tok);
      using rpc::fencing;
      self.on<jm::register_task_manager>(fencing::fenced,
                                         [jseen](jm::register_task_manager_request req)
                                           -> expected<jm::task_manager_registration_response> {
                                           jseen->registrations.push_back(req);
                                           return jm::task_manager_registration_response{
                                             jm::task_manager_registration_success{jm_address}};
                                         });
      self.on<jm::offer_slots>(
        fencing::fenced,
        [jseen](jm::offer_slots_request req) -> expected<jm::offer_slots_response> {
          jseen->offers.push_back(req);
          if (jseen->on_offer)
            jseen->on_offer();
          if (!jseen->accept_offers)
            return jm::offer_slots_response{};
          return jm::offer_slots_response{req.offers};
        });
      self.on<jm::update_task_execution_state>(
        fencing::fenced, [jseen](cluster::task_execution_state s) -> expected<rpc::ack> {
          jseen->states.push_back(s);
          return rpc::ack{};
        });
      self.on<jm::heartbeat_from_task_manager>(
        fencing::fenced,
        [](heartbeat::heartbeat_request) -> expected<rpc::ack> { return rpc::ack{}; });
      self.on<jm::disconnect_task_manager>(
        fencing::fenced, [jseen](jm::disconnect_task_manager_request req) -> expected<rpc::ack> {
          jseen->disconnects.push_back(req);
          return rpc::ack{};
        });
      self.on<jm::acknowledge_checkpoint>(
        fencing::fenced, [jseen](jm::acknowledge_checkpoint_request req) -> expected<rpc::ack> {
          jseen->acknowledged.push_back(req);
          return rpc::ack{};
        });
      self.on<jm::decline_checkpoint>(
        fencing::fenced, [jseen](jm::decline_checkpoint_request req) -> expected<rpc::ack> {
          jseen->declined.push_back(req);
          return rpc::ack{};
        });
    });
    run();
    rm_election->confirm_leadership(rm_token(), leader::leader_address{rm_id_text, rm, {}, 0});
    jm_election->confirm_leadership(jm_token(), leader::leader_address{jm_address, jm, {}, 0});
  }

  // The actors use the HA services and the directory: stop them while those still exist.
  ~te_fixture() {
    for (auto* a : {&tm, &rm, &jm})
      if (*a)
        caf::anon_send_exit(*a, caf::exit_reason::user_shutdown);
    run();
  }

  void start_task_executor(std::int32_t slots = 2, std::filesystem::path log_file = {},
                           std::optional<std::size_t> max_frame_size = std::nullopt) {
    te::task_executor_config cfg;
    cfg.log_file = std::move(log_file);
    cfg.resource_id = te_id;
    cfg.host = "localhost";
    cfg.data_port = 6121;
    cfg.number_of_slots = slots;
    cfg.detached_tasks = false;
    te::task_executor_services services{&ha, &directory, invokables, {}, {}, {}};
    services.holds_partitions = [this](const graph::job_id& job) {
      return held_partitions.count(job) != 0;
    };
    services.release_job_partitions = [this](const graph::job_id& job) {
      released_jobs.push_back(job);
      held_partitions.erase(job);
    };
    services.release_partitions =
      [this](const graph::job_id& job,
             const std::vector<graph::intermediate_result_partition_id>& ids) {
        released_partitions.insert(released_partitions.end(), ids.begin(), ids.end());
        held_partitions.erase(job);
      };
    auto ctx = context(te_id);
    if (max_frame_size)
      ctx.config.max_frame_size = *max_frame_size;
    tm = spawn<te::task_executor>(std::move(ctx), cfg, services);
    run();
  }

  te::task_executor& tex() { return deref<te::task_executor>(tm); }

  /// Asks the TaskExecutor from `from`'s main thread through `gw`; returns the answer.
  template <class M>
  std::optional<expected<typename M::response>> ask_te(const caf::actor& from, rpc::gateway gw,
                                                       typename M::request req) {
    std::optional<expected<typename M::response>> result;
    in_main_thread<fake_endpoint>(from, [&, gw, req](fake_endpoint& self) {
      gw.ask<M>(self, req, [&](expected<typename M::response> r) { result.emplace(std::move(r)); });
    });
    run();
    return result;
  }

  rpc::gateway te_from_rm(rpc::fencing_token token) const {
    return rpc::gateway(tm, te_id, token, te::rm_scope);
  }
  rpc::gateway te_from_jm(rpc::fencing_token token) const {
    return rpc::gateway(tm, te_id, token, job_a.to_string());
  }

  te::request_slot_request slot_request(int index, std::uint64_t allocation) const {
    return te::request_slot_request{cluster::slot_id{te_id, index},
                                    job_a,
                                    cluster::allocation_id{0xa11, allocation},
                                    {},
                                    jm_address,
                                    rm_token()};
  }

  /// RM request_slot for slot `index` under allocation `allocation`; the TE then registers at
  /// the JobMaster and offers.
  void request_slot(int index, std::uint64_t allocation) {
    auto r = ask_te<te::request_slot>(rm, te_from_rm(rm_token()), slot_request(index, allocation));
    REQUIRE(r.has_value());
    REQUIRE(r->has_value());
  }

  std::optional<expected<rpc::ack>> submit(int subtask, std::uint64_t allocation,
                                           std::optional<rpc::fencing_token> token = std::nullopt) {
    auto t = token.value_or(jm_token());
    return ask_te<te::submit_task>(
      jm, te_from_jm(t),
      te::submit_task_request{tdd_for(subtask), t, cluster::allocation_id{0xa11, allocation}});
  }

  std::vector<graph::execution_state> states_of(int subtask) const {
    std::vector<graph::execution_state> out;
    for (auto& s : jm_seen->states)
      if (s.attempt == attempt_for(subtask))
        out.push_back(s.state);
    return out;
  }
};

} // namespace

TEST_CASE_FIXTURE(
  te_fixture,
  "a TaskExecutor registers at the ResourceManager leader it retrieves and sends its slot report") {
  start_task_executor(2);
  CHECK(tex().is_connected_to_resource_manager());
  CHECK(tex().resource_manager_id() == rm_token());
  REQUIRE(rm_seen->registrations.size() == 1);
  CHECK(rm_seen->registrations[0].resource_id == te_id);
  CHECK(rm_seen->registrations[0].task_executor_address == te_id);
  CHECK(rm_seen->registrations[0].number_of_slots == 2);
  CHECK(rm_seen->registrations[0].data_port == 6121);
  REQUIRE(rm_seen->reports.size() == 1);
  CHECK(rm_seen->reports[0].registration_id == cluster::instance_id{1, 2});
  REQUIRE(rm_seen->reports[0].report.slots.size() == 2);
  CHECK(rm_seen->reports[0].report.slots[1].id == cluster::slot_id{te_id, 1});
  CHECK_FALSE(rm_seen->reports[0].report.slots[1].allocation.has_value());
  CHECK(test::contains_in_order(trace(),
                                {{direction::send, "register_task_executor"},
                                 {direction::receive, "register_task_executor"},
                                 {direction::response, "register_task_executor"},
                                 {direction::send, "send_slot_report"},
                                 {direction::receive, "send_slot_report"}}));
  // Both carried the retrieved leader id.
  for (auto& r : trace())
    if (r.dir == direction::receive && r.to == rm_id_text)
      CHECK(r.token == rm_token());
}

TEST_CASE_FIXTURE(
  te_fixture,
  "the ResourceManager's heartbeat request is answered with the slot report as payload") {
  start_task_executor(1);
  auto r = ask_te<te::heartbeat_from_resource_manager>(
    rm, te_from_rm(rm_token()), heartbeat::heartbeat_request{rm_id_text, {}});
  REQUIRE(r.has_value());
  CHECK(r->has_value());
  CHECK(rm_seen->heartbeats == 1);
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "heartbeat_from_resource_manager"},
                                 {direction::send, "heartbeat_from_task_manager"}}));
}

TEST_CASE_FIXTURE(
  te_fixture,
  "trigger_checkpoint reaches the task, whose answer the TaskExecutor passes to the JobMaster") {
  // A source that acknowledges every checkpoint it is asked for, and notes what it was told.
  struct log {
    std::vector<std::int64_t> triggered, completed, aborted;
  };
  auto seen = std::make_shared<log>();
  struct checkpointing_source : te::blocking_invokable {
    std::shared_ptr<log> out;
    std::shared_ptr<te::task_context> context;
    explicit checkpointing_source(std::shared_ptr<log> o) : out(std::move(o)) {}
    void attach(std::shared_ptr<te::task_context> c) override { context = std::move(c); }
    bool trigger_checkpoint(std::int64_t id, std::int64_t, bool) override {
      out->triggered.push_back(id);
      state::task_state_snapshot state;
      state.operators.emplace_back().list_entries.push_back({'4', '2'});
      context->acknowledge_checkpoint(id, std::move(state));
      return true;
    }
    void notify_checkpoint_complete(std::int64_t id) override { out->completed.push_back(id); }
    void notify_checkpoint_aborted(std::int64_t id) override { out->aborted.push_back(id); }
  };
  invokables = [seen](const graph::task_deployment_descriptor&) -> std::unique_ptr<te::invokable> {
    return std::make_unique<checkpointing_source>(seen);
  };
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  run();
  auto attempt = attempt_for(0);
  auto r = ask_te<te::trigger_checkpoint>(jm, te_from_jm(jm_token()),
                                          te::trigger_checkpoint_request{job_a, attempt, 7, 1000, false});
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  run();
  CHECK(seen->triggered == std::vector<std::int64_t>{7});
  REQUIRE(jm_seen->acknowledged.size() == 1);
  CHECK(jm_seen->acknowledged[0].checkpoint_id == 7);
  CHECK(jm_seen->acknowledged[0].attempt == attempt);
  // The task's state travels with the acknowledgement.
  REQUIRE(jm_seen->acknowledged[0].task_state.operators.size() == 1);
  CHECK(jm_seen->acknowledged[0].task_state.operators[0].list_entries
        == std::vector<std::vector<char>>{{'4', '2'}});
  ask_te<te::confirm_checkpoint>(jm, te_from_jm(jm_token()),
                                 te::checkpoint_notification{job_a, attempt, 7});
  ask_te<te::abort_checkpoint>(jm, te_from_jm(jm_token()),
                               te::checkpoint_notification{job_a, attempt, 8});
  run();
  CHECK(seen->completed == std::vector<std::int64_t>{7});
  CHECK(seen->aborted == std::vector<std::int64_t>{8});
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "trigger_checkpoint"},
                                 {direction::send, "acknowledge_checkpoint"},
                                 {direction::receive, "confirm_checkpoint"}}));
  // An attempt that does not run here, or a stale JobMasterId, is refused.
  auto unknown = ask_te<te::trigger_checkpoint>(
    jm, te_from_jm(jm_token()), te::trigger_checkpoint_request{job_a, attempt_for(1), 9, 1, false});
  REQUIRE(unknown.has_value());
  REQUIRE_FALSE(unknown->has_value());
  CHECK(unknown->error().code == errc::not_found);
  auto stale = ask_te<te::trigger_checkpoint>(jm, te_from_jm(rpc::fencing_token{3, 3}),
                                              te::trigger_checkpoint_request{job_a, attempt, 9, 1, false});
  REQUIRE(stale.has_value());
  REQUIRE_FALSE(stale->has_value());
  CHECK(stale->error().code == errc::fencing_token_mismatch);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "a task that takes no part in checkpoints declines a trigger, and the JobMaster hears it") {
  invokables = te::make_invokable_factory<te::blocking_invokable>();
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  run();
  auto attempt = attempt_for(0);
  ask_te<te::trigger_checkpoint>(jm, te_from_jm(jm_token()),
                                 te::trigger_checkpoint_request{job_a, attempt, 3, 1, false});
  run();
  REQUIRE(jm_seen->declined.size() == 1);
  CHECK(jm_seen->declined[0].checkpoint_id == 3);
  CHECK(jm_seen->declined[0].attempt == attempt);
  CHECK(jm_seen->declined[0].cause.find("takes no part in checkpoints") != std::string::npos);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "request_slot_report answers the ResourceManager with every slot, allocated ones with their job") {
  start_task_executor(2);
  auto empty = ask_te<te::request_slot_report>(rm, te_from_rm(rm_token()), rpc::ack{});
  REQUIRE(empty.has_value());
  REQUIRE(empty->has_value());
  CHECK((*empty)->resource_id == te_id);
  REQUIRE((*empty)->report.slots.size() == 2);
  CHECK_FALSE((*empty)->report.slots[1].allocation.has_value());
  request_slot(1, 7);
  auto r = ask_te<te::request_slot_report>(rm, te_from_rm(rm_token()), rpc::ack{});
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  const auto& slots = (*r)->report.slots;
  REQUIRE(slots.size() == 2);
  CHECK(slots[1].id == cluster::slot_id{te_id, 1});
  CHECK(slots[1].allocation == cluster::allocation_id{0xa11, 7});
  CHECK(slots[1].job == job_a);
  CHECK_FALSE(slots[0].allocation.has_value());
  // A caller without the ResourceManager's token is refused.
  auto refused =
    ask_te<te::request_slot_report>(rm, te_from_rm(rpc::fencing_token{9, 9}), rpc::ack{});
  REQUIRE(refused.has_value());
  REQUIRE_FALSE(refused->has_value());
  CHECK(refused->error().code == errc::fencing_token_mismatch);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "request_slot makes the TaskExecutor register at the job's leader and offer the slot, and accepted slots become active") {
  start_task_executor(2);
  request_slot(1, 1);
  REQUIRE(jm_seen->registrations.size() == 1);
  CHECK(jm_seen->registrations[0].task_executor_address == te_id);
  CHECK(jm_seen->registrations[0].location
        == cluster::task_manager_location{te_id, "localhost", 6121});
  REQUIRE(jm_seen->offers.size() == 1);
  CHECK(jm_seen->offers[0].task_manager == te_id);
  REQUIRE(jm_seen->offers[0].offers.size() == 1);
  CHECK(jm_seen->offers[0].offers[0].allocation == cluster::allocation_id{0xa11, 1});
  CHECK(jm_seen->offers[0].offers[0].slot_index == 1);
  CHECK(tex().slot_table().slot(1)->state == te::task_slot_state::active);
  CHECK(tex().jobs().job_master_id_of(job_a) == jm_token());
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "request_slot"},
                                 {direction::send, "register_task_manager"},
                                 {direction::receive, "register_task_manager"},
                                 {direction::send, "offer_slots"},
                                 {direction::receive, "offer_slots"},
                                 {direction::response, "offer_slots"}}));
  for (auto& r : trace())
    if (r.dir == direction::receive && r.to == jm_address)
      CHECK(r.token == jm_token());

  // A second slot for the same job is offered at once over the existing connection.
  request_slot(0, 2);
  CHECK(jm_seen->registrations.size() == 1);
  REQUIRE(jm_seen->offers.size() == 2);
  CHECK(jm_seen->offers[1].offers[0].allocation == cluster::allocation_id{0xa11, 2});
}

TEST_CASE_FIXTURE(
  te_fixture, "a TaskExecutor that stops tells its JobMasters and the ResourceManager at once") {
  start_task_executor(2);
  request_slot(0, 1);
  REQUIRE(jm_seen->registrations.size() == 1);
  caf::anon_send_exit(tm, caf::exit_reason::user_shutdown);
  run();
  REQUIRE(jm_seen->disconnects.size() == 1);
  CHECK(jm_seen->disconnects[0].resource_id == te_id);
  CHECK(jm_seen->disconnects[0].cause == "The TaskExecutor is shutting down.");
  REQUIRE(rm_seen->disconnects.size() == 1);
  CHECK(rm_seen->disconnects[0].resource_id == te_id);
  CHECK(rm_seen->disconnects[0].cause == "The TaskExecutor is shutting down.");
  // Fenced as any other call of the relationship.
  for (auto& r : trace())
    if (r.dir == direction::receive && r.method == "disconnect_task_manager" && r.to == jm_address)
      CHECK(r.token == jm_token());
  tm = caf::actor{};
}

TEST_CASE_FIXTURE(te_fixture,
                  "a slot the JobMaster rejects is freed and the ResourceManager told") {
  jm_seen->accept_offers = false;
  start_task_executor(1);
  request_slot(0, 1);
  CHECK(tex().slot_table().is_slot_free(0));
  REQUIRE(rm_seen->available.size() == 1);
  CHECK(rm_seen->available[0].slot == cluster::slot_id{te_id, 0});
  CHECK(rm_seen->available[0].allocation_id == cluster::allocation_id{0xa11, 1});
  CHECK(tex().jobs().size() == 0);
}

TEST_CASE_FIXTURE(te_fixture,
                  "calls with an old ResourceManagerId or an old JobMasterId are refused") {
  start_task_executor(2);
  std::mt19937_64 rng{3};
  auto old_rm = rpc::fencing_token::generate(rng);
  auto r = ask_te<te::request_slot>(rm, te_from_rm(old_rm), slot_request(0, 1));
  REQUIRE(r.has_value());
  REQUIRE_FALSE(r->has_value());
  CHECK(r->error().code == errc::fencing_token_mismatch);
  CHECK(r->error().message.find(old_rm.to_string()) != std::string::npos);
  CHECK(tex().slot_table().is_slot_free(0));

  request_slot(0, 1);
  auto old_jm = rpc::fencing_token::generate(rng);
  auto s = submit(0, 1, old_jm);
  REQUIRE(s.has_value());
  REQUIRE_FALSE(s->has_value());
  CHECK(s->error().code == errc::fencing_token_mismatch);
  CHECK(s->error().message.find(jm_token().to_string()) != std::string::npos);
  CHECK(tex().number_of_running_tasks() == 0);

  // A job the TaskExecutor serves no JobMaster for has no token at all.
  auto f = ask_te<te::free_slot>(
    jm, rpc::gateway(tm, te_id, jm_token(), graph::job_id{9, 9}.to_string()),
    te::free_slot_request{graph::job_id{9, 9}, cluster::allocation_id{0xa11, 1}, "x"});
  REQUIRE(f.has_value());
  CHECK(f->error().code == errc::fencing_token_mismatch);
  CHECK_FALSE(tex().slot_table().is_slot_free(0));
}

TEST_CASE_FIXTURE(te_fixture,
                  "a task reports DEPLOYING, INITIALIZING, RUNNING and FINISHED to its JobMaster") {
  start_task_executor(1);
  request_slot(0, 1);
  auto r = submit(0, 1);
  REQUIRE(r.has_value());
  CHECK(r->has_value());
  using graph::execution_state;
  CHECK(states_of(0)
        == std::vector<execution_state>{execution_state::deploying, execution_state::initializing,
                                        execution_state::running, execution_state::finished});
  CHECK(tex().number_of_running_tasks() == 0);
  CHECK(tex().slot_table().tasks_of(cluster::allocation_id{0xa11, 1}).empty());
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "submit_task"},
                                 {direction::send, "update_task_execution_state"},
                                 {direction::receive, "update_task_execution_state"}}));
}

TEST_CASE_FIXTURE(te_fixture, "cancel_task ends a running task CANCELED") {
  invokables = te::make_invokable_factory<te::blocking_invokable>();
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  using graph::execution_state;
  CHECK(states_of(0)
        == std::vector<execution_state>{execution_state::deploying, execution_state::initializing,
                                        execution_state::running});
  CHECK(tex().number_of_running_tasks() == 1);
  auto c = ask_te<te::cancel_task>(jm, te_from_jm(jm_token()),
                                   te::cancel_task_request{job_a, attempt_for(0)});
  REQUIRE(c.has_value());
  CHECK(c->has_value());
  CHECK(states_of(0).back() == execution_state::canceled);
  CHECK(tex().number_of_running_tasks() == 0);
  auto again = ask_te<te::cancel_task>(jm, te_from_jm(jm_token()),
                                       te::cancel_task_request{job_a, attempt_for(0)});
  CHECK(again->error().code == errc::not_found);
}

TEST_CASE_FIXTURE(te_fixture, "a cancel mail interleaves with a task's steps") {
  invokables = [](const graph::task_deployment_descriptor&) -> std::unique_ptr<te::invokable> {
    return std::make_unique<te::counting_invokable>(1000000);
  };
  start_task_executor(1);
  request_slot(0, 1);
  // Submit without draining: step the scheduler a bounded number of times, then cancel.
  in_main_thread<fake_endpoint>(jm, [&](fake_endpoint& self) {
    te_from_jm(jm_token())
      .ask<te::submit_task>(
        self, te::submit_task_request{tdd_for(0), jm_token(), cluster::allocation_id{0xa11, 1}},
        [](expected<rpc::ack>) {});
  });
  for (int i = 0; i < 50; ++i)
    run_once();
  auto task = tex().task_of(attempt_for(0));
  REQUIRE(task);
  caf::anon_send(task, te::task_cancel_atom::value);
  run();
  CHECK(states_of(0).back() == graph::execution_state::canceled);
  CHECK(tex().number_of_running_tasks() == 0);
}

TEST_CASE_FIXTURE(
  te_fixture, "cancel_task raises the task's interrupt flag before its cancel mail is handled") {
  // What the flag said when the task handled its cancel mail (in the task's thread).
  auto raised_at_cancel = std::make_shared<std::optional<bool>>();
  struct watching : te::blocking_invokable {
    std::shared_ptr<std::optional<bool>> out;
    const std::atomic<bool>* flag = nullptr;
    explicit watching(std::shared_ptr<std::optional<bool>> o) : out(std::move(o)) {}
    void attach(std::shared_ptr<te::task_context> context) override {
      flag = context->interrupt_flag();
    }
    void cancel() override {
      *out = flag != nullptr && flag->load();
      blocking_invokable::cancel();
    }
  };
  invokables =
    [raised_at_cancel](const graph::task_deployment_descriptor&) -> std::unique_ptr<te::invokable> {
    return std::make_unique<watching>(raised_at_cancel);
  };
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  auto c = ask_te<te::cancel_task>(jm, te_from_jm(jm_token()),
                                   te::cancel_task_request{job_a, attempt_for(0)});
  REQUIRE(c.has_value());
  CHECK(c->has_value());
  REQUIRE(raised_at_cancel->has_value());
  CHECK(**raised_at_cancel);
  CHECK(states_of(0).back() == graph::execution_state::canceled);
}

TEST_CASE_FIXTURE(te_fixture, "a failing invokable ends FAILED with its cause") {
  invokables =
    te::make_invokable_factory<te::counting_invokable>(5, 2, std::string("boom at step 2"));
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  REQUIRE_FALSE(jm_seen->states.empty());
  CHECK(jm_seen->states.back().state == graph::execution_state::failed);
  CHECK(jm_seen->states.back().failure_cause == "boom at step 2");
}

TEST_CASE_FIXTURE(
  te_fixture, "free_slot frees the slot, tells the ResourceManager and ends the job's connection") {
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  auto f = ask_te<te::free_slot>(
    jm, te_from_jm(jm_token()),
    te::free_slot_request{job_a, cluster::allocation_id{0xa11, 1}, "job done"});
  REQUIRE(f.has_value());
  CHECK(f->has_value());
  CHECK(tex().slot_table().is_slot_free(0));
  REQUIRE(rm_seen->available.size() == 1);
  CHECK(rm_seen->available[0].registration_id == cluster::instance_id{1, 2});
  CHECK(tex().jobs().size() == 0);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "freeing a slot with a running task fails the task first and frees the slot after it") {
  invokables = te::make_invokable_factory<te::blocking_invokable>();
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  auto f = ask_te<te::free_slot>(
    jm, te_from_jm(jm_token()),
    te::free_slot_request{job_a, cluster::allocation_id{0xa11, 1}, "slot released"});
  REQUIRE(f->has_value());
  CHECK(tex().slot_table().is_slot_free(0));
  CHECK(tex().number_of_running_tasks() == 0);
  CHECK(rm_seen->available.size() == 1);
}

TEST_CASE_FIXTURE(te_fixture, "bad input gets clear errors") {
  start_task_executor(2);
  request_slot(0, 1);
  // The slot is taken by another allocation.
  auto taken = ask_te<te::request_slot>(rm, te_from_rm(rm_token()), slot_request(0, 2));
  REQUIRE(taken.has_value());
  CHECK(taken->error().code == errc::rejected);
  CHECK(taken->error().message.find("already been allocated") != std::string::npos);
  // A slot index the TaskExecutor does not have.
  auto missing = ask_te<te::request_slot>(rm, te_from_rm(rm_token()), slot_request(5, 3));
  CHECK(missing->error().code == errc::invalid_argument);
  // A task for an allocation the TaskExecutor does not hold.
  auto unknown = submit(0, 42);
  CHECK(unknown->error().code == errc::not_found);
  CHECK(unknown->error().message.find("No task slot allocated") != std::string::npos);
  // Freeing an unknown allocation, cancelling an unknown task.
  auto f =
    ask_te<te::free_slot>(jm, te_from_jm(jm_token()),
                          te::free_slot_request{job_a, cluster::allocation_id{0xa11, 42}, "x"});
  CHECK(f->error().code == errc::not_found);
  auto c = ask_te<te::cancel_task>(jm, te_from_jm(jm_token()),
                                   te::cancel_task_request{job_a, attempt_for(1)});
  CHECK(c->error().code == errc::not_found);
  // Malformed bytes never reach a handler.
  std::optional<expected<std::vector<char>>> raw;
  in_main_thread<fake_endpoint>(rm, [&](fake_endpoint& self) {
    te_from_rm(rm_token())
      .ask_raw(self, te::request_slot::id, "request_slot", {'x', 'y'}, std::nullopt,
               [&](expected<std::vector<char>> r) { raw.emplace(std::move(r)); });
  });
  run();
  REQUIRE(raw.has_value());
  CHECK(raw->error().code == errc::malformed_message);
  CHECK(tex().slot_table().number_of_free_slots() == 1);
}

TEST_CASE_FIXTURE(te_fixture, "disconnect_resource_manager makes the TaskExecutor register again") {
  start_task_executor(1);
  auto r = ask_te<te::disconnect_resource_manager>(rm, te_from_rm(rm_token()),
                                                   te::disconnect_resource_manager_request{"test"});
  REQUIRE(r.has_value());
  CHECK(r->has_value());
  CHECK(rm_seen->disconnects.size() == 1);
  CHECK(rm_seen->registrations.size() == 2);
  CHECK(rm_seen->reports.size() == 2);
  CHECK(tex().is_connected_to_resource_manager());
}

TEST_CASE_FIXTURE(
  te_fixture, "a slot whose JobMaster lost leadership is freed after taskmanager.slot.timeout") {
  start_task_executor(1);
  request_slot(0, 1);
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::active);
  ha.job_master_leadership(job_a).revoke_and_regrant(); // the new leader never confirms
  run();
  CHECK_FALSE(tex().jobs().job_master_id_of(job_a).has_value());
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::allocated);
  advance(9s);
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::allocated);
  CHECK(rm_seen->available.empty());
  advance(1s);
  CHECK(tex().slot_table().is_slot_free(0));
  REQUIRE(rm_seen->available.size() == 1);
  CHECK(rm_seen->available[0].allocation_id == cluster::allocation_id{0xa11, 1});
  CHECK(tex().jobs().size() == 0);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "a slot for a job whose JobMaster never shows up is freed after taskmanager.slot.timeout") {
  start_task_executor(1);
  auto req = slot_request(0, 1);
  req.job_id = graph::job_id{0xb, 2};
  auto r = ask_te<te::request_slot>(rm, te_from_rm(rm_token()), req);
  REQUIRE(r->has_value());
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::allocated);
  advance(10s);
  CHECK(tex().slot_table().is_slot_free(0));
  CHECK(rm_seen->available.size() == 1);
}

TEST_CASE_FIXTURE(te_fixture, "disconnect_job_manager fails the job's tasks and frees its slots") {
  invokables = te::make_invokable_factory<te::blocking_invokable>();
  start_task_executor(2);
  request_slot(0, 1);
  request_slot(1, 2);
  REQUIRE(submit(0, 1)->has_value());
  CHECK(tex().number_of_running_tasks() == 1);
  auto r = ask_te<te::disconnect_job_manager>(
    jm, te_from_jm(jm_token()), te::disconnect_job_manager_request{job_a, "job master stopped"});
  REQUIRE(r.has_value());
  CHECK(r->has_value());
  CHECK(tex().number_of_running_tasks() == 0);
  CHECK(tex().slot_table().number_of_free_slots() == 2);
  CHECK(rm_seen->available.size() == 2);
  CHECK(tex().jobs().size() == 0);
  // Calls about the job are refused from now on: no JobMasterId is known for it.
  auto again =
    ask_te<te::free_slot>(jm, te_from_jm(jm_token()),
                          te::free_slot_request{job_a, cluster::allocation_id{0xa11, 1}, "x"});
  CHECK(again->error().code == errc::fencing_token_mismatch);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "a JobMaster whose heartbeat requests stop is registered at again and offered the slots anew") {
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(jm_seen->registrations.size() == 1);
  REQUIRE(jm_seen->offers.size() == 1);
  // The fake JobMaster never requests heartbeats: the TE's monitor times out after 50 s.
  advance(49s);
  CHECK(jm_seen->registrations.size() == 1);
  advance(1s);
  CHECK(jm_seen->registrations.size() == 2);
  REQUIRE(jm_seen->offers.size() == 2);
  CHECK(jm_seen->offers[1].offers[0].allocation == cluster::allocation_id{0xa11, 1});
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::active);
  CHECK(tex().jobs().job_master_id_of(job_a) == jm_token());
  // Accepted again before taskmanager.slot.timeout: the slot stays.
  advance(15s);
  CHECK(tex().slot_table().slot(0)->state == te::task_slot_state::active);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "tasks failed with a closed JobMaster connection report to nobody, and the job's slots are "
  "offered again only once they ended") {
  invokables = te::make_invokable_factory<te::blocking_invokable>();
  start_task_executor(1);
  request_slot(0, 1);
  REQUIRE(submit(0, 1)->has_value());
  REQUIRE(tex().number_of_running_tasks() == 1);
  auto states_before = jm_seen->states.size();
  std::vector<std::size_t> running_at_offer;
  jm_seen->on_offer = [&] { running_at_offer.push_back(tex().number_of_running_tasks()); };
  // The JobMaster's heartbeat times out: the connection closes, the task is failed. Newest job
  // first, so that the registration at the JobMaster completes before the task handles its fail
  // mail — the order a loaded machine may give.
  sched.advance_time(50s);
  for (int i = 0; i < 200 && sched.try_run_once_lifo(); ++i)
    if (jm_seen->registrations.size() == 2 && tex().jobs().job_master_id_of(job_a))
      break;
  REQUIRE(jm_seen->registrations.size() == 2);
  CHECK(running_at_offer.empty());
  run();
  CHECK(tex().number_of_running_tasks() == 0);
  REQUIRE(running_at_offer.size() == 1);
  CHECK(running_at_offer[0] == 0);
  // Its FAILED went nowhere: the JobMaster of the new connection never deployed it.
  CHECK(jm_seen->states.size() == states_before);
}

TEST_CASE_FIXTURE(
  te_fixture,
  "a job whose blocking partitions are here stays after its last slot is freed, until the JobMaster releases them") {
  start_task_executor(1);
  request_slot(0, 1);
  held_partitions.insert(job_a);
  auto f =
    ask_te<te::free_slot>(jm, te_from_jm(jm_token()),
                          te::free_slot_request{job_a, cluster::allocation_id{0xa11, 1}, "idle"});
  REQUIRE(f->has_value());
  // No slot left, but its consumers still need the partitions: the JobMaster connection stays.
  CHECK(tex().jobs().job_master_id_of(job_a) == jm_token());
  CHECK(released_jobs.empty());
  graph::intermediate_result_partition_id p{graph::intermediate_data_set_id{5, 6}, 1};
  auto r = ask_te<te::release_partitions>(jm, te_from_jm(jm_token()),
                                          te::release_partitions_request{job_a, {p}});
  REQUIRE(r.has_value());
  CHECK(r->has_value());
  REQUIRE(released_partitions.size() == 1);
  CHECK(released_partitions[0] == p);
  // Nothing of the job is left here now: it goes.
  CHECK(tex().jobs().size() == 0);
}

TEST_CASE_FIXTURE(te_fixture, "disconnect_job_manager releases the job's partitions here") {
  start_task_executor(1);
  request_slot(0, 1);
  held_partitions.insert(job_a);
  auto r = ask_te<te::disconnect_job_manager>(
    jm, te_from_jm(jm_token()),
    te::disconnect_job_manager_request{job_a, "JobMaster is stopping."});
  REQUIRE(r->has_value());
  REQUIRE(released_jobs.size() == 1);
  CHECK(released_jobs[0] == job_a);
  CHECK(held_partitions.empty());
}

namespace {

/// A scratch log directory: taskmanager.log, its .out, and a link out of the directory.
struct log_directory {
  std::filesystem::path root = std::filesystem::temp_directory_path()
    / ("flint_te_log_files_" + std::to_string(::getpid()));
  std::filesystem::path dir = root / "log";
  log_directory() {
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(dir);
    write(dir / "taskmanager.log", "the TaskManager's log\n");
    write(dir / "taskmanager.out", "the TaskManager's stdout\n");
    write(root / "secret.txt", "outside\n");
    std::filesystem::create_symlink(root / "secret.txt", dir / "link.log");
  }
  ~log_directory() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  static void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
};

std::string text_of(const std::vector<char>& data) {
  return std::string(data.begin(), data.end());
}

} // namespace

TEST_CASE_FIXTURE(te_fixture,
                  "request_log_list lists the regular files of the log directory, not a link out") {
  log_directory logs;
  start_task_executor(1, logs.dir / "taskmanager.log");
  auto r = ask_te<te::request_log_list>(rm, te_from_rm(rm_token()), rpc::ack{});
  REQUIRE(r.has_value());
  REQUIRE_MESSAGE(r->has_value(), r->error().to_string());
  REQUIRE((*r)->logs.size() == 2);
  CHECK((*r)->logs[0].name == "taskmanager.log");
  CHECK((*r)->logs[0].size == 22);
  CHECK((*r)->logs[0].mtime > 0);
  CHECK((*r)->logs[1].name == "taskmanager.out");
  auto refused = ask_te<te::request_log_list>(rm, te_from_rm(rpc::fencing_token{9, 9}), rpc::ack{});
  REQUIRE(refused.has_value());
  REQUIRE_FALSE(refused->has_value());
  CHECK(refused->error().code == errc::fencing_token_mismatch);
}

TEST_CASE_FIXTURE(te_fixture, "request_log_list without a log file lists nothing") {
  start_task_executor(1);
  auto r = ask_te<te::request_log_list>(rm, te_from_rm(rm_token()), rpc::ack{});
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  CHECK((*r)->logs.empty());
}

TEST_CASE_FIXTURE(
  te_fixture,
  "request_file_upload_by_name sends a file of the log directory in pieces and refuses other names") {
  log_directory logs;
  start_task_executor(1, logs.dir / "taskmanager.log");
  auto whole = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"taskmanager.out", 0, 1 << 20});
  REQUIRE(whole.has_value());
  REQUIRE_MESSAGE(whole->has_value(), whole->error().to_string());
  CHECK((*whole)->name == "taskmanager.out");
  CHECK(text_of((*whole)->data) == "the TaskManager's stdout\n");
  CHECK((*whole)->size == 25);
  // A piece: from offset 4, at most 10 bytes.
  auto piece = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"taskmanager.out", 4, 10});
  REQUIRE(piece->has_value());
  CHECK(text_of((*piece)->data) == "TaskManage");
  CHECK((*piece)->offset == 4);
  CHECK((*piece)->size == 25);
  // Past the end: nothing, and the size says the file is done.
  auto past = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"taskmanager.out", 25, 10});
  REQUIRE(past->has_value());
  CHECK((*past)->data.empty());
  for (const std::string bad : {"../secret.txt", "..", "sub/taskmanager.log", ""}) {
    auto r = ask_te<te::request_file_upload_by_name>(rm, te_from_rm(rm_token()),
                                                    te::file_upload_by_name_request{bad, 0, 10});
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK_MESSAGE(r->error().code == errc::invalid_argument, bad);
  }
  for (const std::string missing : {"link.log", "no-such.log"}) {
    auto r = ask_te<te::request_file_upload_by_name>(
      rm, te_from_rm(rm_token()), te::file_upload_by_name_request{missing, 0, 10});
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK_MESSAGE(r->error().code == errc::not_found, missing);
  }
  auto negative = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"taskmanager.out", -1, 10});
  REQUIRE_FALSE(negative->has_value());
  CHECK(negative->error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(te_fixture,
                  "request_file_upload_by_name sends no more than file_chunk_max_bytes a call") {
  log_directory logs;
  log_directory::write(logs.dir / "big.log",
                       std::string(static_cast<std::size_t>(te::file_chunk_max_bytes) + 100, 'x'));
  start_task_executor(1, logs.dir / "taskmanager.log");
  auto r = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"big.log", 0, 1LL << 40});
  REQUIRE(r.has_value());
  REQUIRE_MESSAGE(r->has_value(), r->error().to_string());
  CHECK(static_cast<std::int64_t>((*r)->data.size()) == te::file_chunk_max_bytes);
  CHECK((*r)->size == te::file_chunk_max_bytes + 100);
}

TEST_CASE_FIXTURE(te_fixture, "a TaskExecutor with a small rpc.max-frame-size sends files in "
                              "pieces of half a frame") {
  // A 4 MiB piece would be larger than the frame the JobManager accepts with the same setting.
  log_directory logs;
  log_directory::write(logs.dir / "big.log", std::string(100'000, 'x'));
  start_task_executor(1, logs.dir / "taskmanager.log", 64 * 1024);
  auto r = ask_te<te::request_file_upload_by_name>(
    rm, te_from_rm(rm_token()), te::file_upload_by_name_request{"big.log", 0, 1LL << 40});
  REQUIRE(r.has_value());
  REQUIRE_MESSAGE(r->has_value(), r->error().to_string());
  CHECK((*r)->data.size() == 32 * 1024);
  CHECK((*r)->size == 100'000);
  CHECK(te::file_chunk_bytes_for(4096) == 2048);
  CHECK(te::file_chunk_bytes_for(128u << 20) == te::file_chunk_max_bytes);
}

TEST_CASE_FIXTURE(te_fixture,
                  "request_file_upload_by_type sends the log file and its .out sibling") {
  log_directory logs;
  start_task_executor(1, logs.dir / "taskmanager.log");
  auto log = ask_te<te::request_file_upload_by_type>(
    rm, te_from_rm(rm_token()), te::file_upload_by_type_request{"LOG", 0, 1 << 20});
  REQUIRE(log->has_value());
  CHECK(text_of((*log)->data) == "the TaskManager's log\n");
  auto out = ask_te<te::request_file_upload_by_type>(
    rm, te_from_rm(rm_token()), te::file_upload_by_type_request{"STDOUT", 0, 1 << 20});
  REQUIRE(out->has_value());
  CHECK(text_of((*out)->data) == "the TaskManager's stdout\n");
  auto other = ask_te<te::request_file_upload_by_type>(
    rm, te_from_rm(rm_token()), te::file_upload_by_type_request{"GC", 0, 10});
  REQUIRE_FALSE(other->has_value());
  CHECK(other->error().code == errc::invalid_argument);
}

TEST_CASE_FIXTURE(te_fixture, "request_file_upload_by_type without a log file is not_found") {
  start_task_executor(1);
  auto log = ask_te<te::request_file_upload_by_type>(
    rm, te_from_rm(rm_token()), te::file_upload_by_type_request{"LOG", 0, 10});
  REQUIRE(log.has_value());
  REQUIRE_FALSE(log->has_value());
  CHECK(log->error().code == errc::not_found);
}

TEST_CASE_FIXTURE(te_fixture, "request_thread_dump lists this process's threads") {
  start_task_executor(1);
  auto r = ask_te<te::request_thread_dump>(rm, te_from_rm(rm_token()), rpc::ack{});
  REQUIRE(r.has_value());
  REQUIRE(r->has_value());
  REQUIRE_FALSE((*r)->thread_infos.empty());
  CHECK_FALSE((*r)->thread_infos[0].thread_name.empty());
  CHECK((*r)->thread_infos[0].stringified_thread_info.find(" Id=") != std::string::npos);
}
