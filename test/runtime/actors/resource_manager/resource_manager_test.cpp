// The ResourceManager driven message by message on the deterministic scheduler, against fake
// TaskExecutors and a fake JobMaster built from lambdas; time moves only when the test says.

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <random>

#include <caf/all.hpp>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/leader/ha_services.hpp"

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
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

const graph::job_id job_a{0xa, 1};
const std::string rm_name = "resource_manager";
const std::string jm_name = "job_master/" + job_a.to_string();
const rpc::fencing_token jm_token{0x1111, 0x2222};

/// A fake TaskExecutor: what it saw, and how it behaves.
struct te_peer {
  std::string id;
  caf::actor rm;
  rpc::fencing_token rm_token;
  cluster::slot_report report;
  bool answer_heartbeats = true;
  /// errc::none: acknowledge request_slot; otherwise refuse with this code.
  errc request_slot_answer = errc::none;
  std::vector<te::request_slot_request> slot_requests;
  std::vector<te::disconnect_resource_manager_request> disconnects;
};

/// A fake JobMaster: what it saw.
struct jm_peer {
  caf::actor rm;
  rpc::fencing_token rm_token;
  bool answer_heartbeats = true;
  std::vector<jm::disconnect_task_manager_request> lost_task_managers;
  std::vector<jm::fail_slot_request> failed_slots;
  std::vector<jm::disconnect_resource_manager_request> disconnects;
};

cluster::slot_report free_report(const std::string& owner, int n) {
  cluster::slot_report r;
  for (int i = 0; i < n; ++i)
    r.slots.push_back(
      cluster::slot_status{cluster::slot_id{owner, i}, {}, std::nullopt, std::nullopt});
  return r;
}

struct rm_fixture : test_fixture {
  leader::embedded_ha_services ha{11};
  rpc::endpoint_directory directory;
  std::unique_ptr<leader::leader_election_service> election = ha.resource_manager_election();
  caf::actor rm;
  rpc::fencing_token token;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_sink =
    std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100);
  std::shared_ptr<spdlog::logger> log = std::make_shared<spdlog::logger>("rm", log_sink);
  std::chrono::nanoseconds start_time = sched.clock().now().time_since_epoch();

  rm_fixture() {
    rm::resource_manager_config cfg;
    cfg.heartbeat.interval = 10s;
    cfg.heartbeat.timeout = 50s;
    cfg.slot_request_timeout = 5min;
    cfg.task_manager_timeout = 30s;
    log->set_pattern("%v");
    rm = spawn<rm::resource_manager>(context(rm_name), cfg,
                                     rm::resource_manager_services{election.get(), &directory, log});
    run();
    token = ha.resource_manager_leadership().current_session_id();
  }

  // The RM uses the election service: stop it while that still exists.
  ~rm_fixture() {
    caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
    run();
  }

  bool logged(const std::string& text) const {
    for (auto& line : log_sink->last_formatted())
      if (line.find(text) != std::string::npos)
        return true;
    return false;
  }

  rm::resource_manager& rmx() { return deref<rm::resource_manager>(rm); }
  const rm::slot_manager& slots() { return *rmx().slots(); }

  std::chrono::nanoseconds elapsed() const {
    return sched.clock().now().time_since_epoch() - start_time;
  }
  /// Moves time to `t` in steps, so that every periodic timer fires at its own time.
  void step_to(std::chrono::nanoseconds t, std::chrono::nanoseconds step = 1s) {
    while (elapsed() < t)
      advance(std::min<std::chrono::nanoseconds>(step, t - elapsed()));
  }

  std::shared_ptr<te_peer> spawn_task_executor(const std::string& id, int slots) {
    auto peer = std::make_shared<te_peer>();
    peer->id = id;
    peer->rm = rm;
    peer->rm_token = token;
    peer->report = free_report(id, slots);
    peer->rm = rm;
    auto handle = spawn<fake_endpoint>(context(id), [peer](fake_endpoint& self) {
      using rpc::fencing;
      self.on<te::request_slot>(
        fencing::unfenced, [peer](te::request_slot_request req) -> expected<rpc::ack> {
          peer->slot_requests.push_back(req);
          if (peer->request_slot_answer != errc::none)
            return make_error(peer->request_slot_answer, "refused by the test");
          for (auto& s : peer->report.slots)
            if (s.id == req.slot) {
              s.allocation = req.allocation_id;
              s.job = req.job_id;
            }
          return rpc::ack{};
        });
      self.on<te::heartbeat_from_resource_manager>(
        fencing::unfenced, [peer, &self](heartbeat::heartbeat_request) -> expected<rpc::ack> {
          if (peer->answer_heartbeats)
            rpc::gateway(peer->rm, rm_name, peer->rm_token)
              .tell<rm::heartbeat_from_task_manager>(
                self, heartbeat::heartbeat_request{peer->id, rm::encode_slot_report(peer->report)});
          return rpc::ack{};
        });
      self.on<te::disconnect_resource_manager>(
        fencing::unfenced,
        [peer](te::disconnect_resource_manager_request req) -> expected<rpc::ack> {
          peer->disconnects.push_back(req);
          return rpc::ack{};
        });
    });
    handles_.push_back(handle);
    run();
    return peer;
  }

  /// The fake TaskExecutor `peer` (the last spawned one by default) registers and reports.
  expected<rm::task_executor_registration_response> register_task_executor(
    const std::shared_ptr<te_peer>& peer, rpc::fencing_token with) {
    std::optional<expected<rm::task_executor_registration_response>> result;
    in_main_thread<fake_endpoint>(handle_of(peer->id), [&](fake_endpoint& self) {
      rpc::gateway(rm, rm_name, with)
        .ask<rm::register_task_executor>(
          self,
          rm::task_executor_registration_request{
            peer->id, peer->id, 6121, "", {}, static_cast<std::int32_t>(peer->report.slots.size())},
          [&](expected<rm::task_executor_registration_response> r) {
            result.emplace(std::move(r));
          });
    });
    run();
    REQUIRE(result.has_value());
    return *result;
  }

  cluster::instance_id register_and_report(const std::shared_ptr<te_peer>& peer) {
    auto r = register_task_executor(peer, token);
    REQUIRE(r.has_value());
    auto* success = std::get_if<rm::task_executor_registration_success>(&*r);
    REQUIRE(success != nullptr);
    auto instance = success->registration_id;
    auto ack = ask_from<rm::send_slot_report>(
      handle_of(peer->id), rm::send_slot_report_request{peer->id, instance, peer->report});
    REQUIRE(ack.has_value());
    return instance;
  }

  std::shared_ptr<jm_peer> spawn_job_master() {
    auto peer = std::make_shared<jm_peer>();
    peer->rm = rm;
    peer->rm_token = token;
    jm_ = spawn<fake_endpoint>(context(jm_name), [peer](fake_endpoint& self) {
      using rpc::fencing;
      self.on<jm::heartbeat_from_resource_manager>(
        fencing::unfenced, [peer, &self](heartbeat::heartbeat_request) -> expected<rpc::ack> {
          if (peer->answer_heartbeats)
            rpc::gateway(peer->rm, rm_name, peer->rm_token)
              .tell<rm::heartbeat_from_job_manager>(self,
                                                    heartbeat::heartbeat_request{jm_name, {}});
          return rpc::ack{};
        });
      self.on<jm::disconnect_task_manager>(
        fencing::unfenced, [peer](jm::disconnect_task_manager_request req) -> expected<rpc::ack> {
          peer->lost_task_managers.push_back(req);
          return rpc::ack{};
        });
      self.on<jm::fail_slot>(fencing::unfenced,
                             [peer](jm::fail_slot_request req) -> expected<rpc::ack> {
                               peer->failed_slots.push_back(req);
                               return rpc::ack{};
                             });
      self.on<jm::disconnect_resource_manager>(
        fencing::unfenced,
        [peer](jm::disconnect_resource_manager_request req) -> expected<rpc::ack> {
          peer->disconnects.push_back(req);
          return rpc::ack{};
        });
    });
    run();
    auto r = ask_from<rm::register_job_manager>(
      jm_, rm::job_master_registration_request{jm_token, jm_name, jm_name, job_a});
    REQUIRE(r.has_value());
    REQUIRE(std::holds_alternative<rm::job_master_registration_success>(*r));
    CHECK(std::get<rm::job_master_registration_success>(*r).resource_manager_id == token);
    return peer;
  }

  template <class M>
  expected<typename M::response> ask_from(const caf::actor& from, typename M::request req,
                                          std::optional<rpc::fencing_token> with = std::nullopt) {
    std::optional<expected<typename M::response>> result;
    auto t = with.value_or(token);
    in_main_thread<fake_endpoint>(from, [&, req, t](fake_endpoint& self) {
      rpc::gateway(rm, rm_name, t).ask<M>(self, req, [&](expected<typename M::response> r) {
        result.emplace(std::move(r));
      });
    });
    run();
    REQUIRE(result.has_value());
    return *result;
  }

  expected<rpc::ack> request_slot(std::uint64_t allocation,
                                  cluster::job_master_id with_jm = jm_token,
                                  graph::job_id job = job_a) {
    return ask_from<rm::request_slot>(
      jm_,
      rm::request_slot_request{
        with_jm, rm::slot_request{job, cluster::allocation_id{0xa11, allocation}, {}, jm_name}});
  }

  caf::actor handle_of(const std::string& id) {
    auto found = directory_.find(id);
    if (found != directory_.end())
      return found->second;
    for (auto& h : handles_)
      if (deref<fake_endpoint>(h).endpoint_id() == id)
        return directory_[id] = h;
    return {};
  }

  caf::actor jm_;
  std::vector<caf::actor> handles_;
  std::map<std::string, caf::actor> directory_;
};

const cluster::slot_id slot0{"task_executor/tm-1", 0};

} // namespace

TEST_CASE_FIXTURE(rm_fixture,
                  "the ResourceManager leads under its session id and confirms with its handle") {
  CHECK_FALSE(token.is_nil());
  CHECK(rmx().token() == token);
  CHECK(directory.lookup(rm_name).has_value());
  REQUIRE(rmx().slots() != nullptr);
}

TEST_CASE_FIXTURE(rm_fixture,
                  "a TaskExecutor registers with its slot report and its slots become free slots") {
  auto tm = spawn_task_executor("task_executor/tm-1", 2);
  auto r = register_task_executor(tm, token);
  REQUIRE(r.has_value());
  auto* success = std::get_if<rm::task_executor_registration_success>(&*r);
  REQUIRE(success != nullptr);
  CHECK(success->resource_manager_resource_id == rm_name);
  CHECK(success->heartbeat_interval_ms == 10000);
  CHECK(rmx().is_registered_task_executor("task_executor/tm-1"));
  CHECK(slots().number_of_registered_slots() == 0); // the report brings the slots
  auto ack = ask_from<rm::send_slot_report>(
    handle_of(tm->id), rm::send_slot_report_request{tm->id, success->registration_id, tm->report});
  CHECK(ack.has_value());
  CHECK(slots().number_of_registered_slots() == 2);
  CHECK(slots().number_of_free_slots() == 2);
  auto overview = ask_from<rm::request_resource_overview>(handle_of(tm->id), rpc::ack{});
  REQUIRE(overview.has_value());
  CHECK(overview->number_task_managers == 1);
  CHECK(overview->number_registered_slots == 2);
  CHECK(overview->number_free_slots == 2);
  CHECK(overview->number_pending_slot_requests == 0);
  REQUIRE(overview->task_managers.size() == 1);
  CHECK(overview->task_managers[0].resource_id == tm->id);
  CHECK(overview->task_managers[0].slots_number == 2);
  CHECK(overview->task_managers[0].free_slots == 2);
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "register_task_executor"},
                                 {direction::reply, "register_task_executor"},
                                 {direction::receive, "send_slot_report"},
                                 {direction::reply, "send_slot_report"}}));
  // A report under a registration id the RM never gave is refused.
  auto bad = ask_from<rm::send_slot_report>(
    handle_of(tm->id),
    rm::send_slot_report_request{tm->id, cluster::instance_id{9, 9}, tm->report});
  CHECK(bad.error().code == errc::not_found);
}

TEST_CASE(
  "two runs of a ResourceManager with the same name give a TaskExecutor different registration ids") {
  // Flink's InstanceID is random: a restarted ResourceManager must not reissue its predecessor's
  // ids, or a TaskExecutor's stale registration would pass for the current one.
  auto registration_id = [] {
    rm_fixture run;
    auto tm = run.spawn_task_executor("task_executor/tm-1", 1);
    return run.register_and_report(tm);
  };
  auto first = registration_id();
  auto second = registration_id();
  CHECK_FALSE(first == second);
}

TEST_CASE_FIXTURE(rm_fixture, "calls carrying an old ResourceManagerId are refused") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  std::mt19937_64 rng{5};
  auto old = rpc::fencing_token::generate(rng);
  auto r = register_task_executor(tm, old);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == errc::fencing_token_mismatch);
  CHECK(r.error().message.find(old.to_string()) != std::string::npos);
  CHECK(rmx().number_of_task_executors() == 0);
}

TEST_CASE_FIXTURE(
  rm_fixture,
  "a JobMaster's slot request is served from a free slot: the RM asks the TaskExecutor under its own id") {
  auto tm = spawn_task_executor("task_executor/tm-1", 2);
  auto instance = register_and_report(tm);
  auto jmp = spawn_job_master();
  CHECK(rmx().is_registered_job_manager(job_a));
  auto ack = request_slot(1);
  CHECK(ack.has_value());
  REQUIRE(tm->slot_requests.size() == 1);
  auto& req = tm->slot_requests[0];
  CHECK(req.slot == slot0);
  CHECK(req.job_id == job_a);
  CHECK(req.allocation_id == cluster::allocation_id{0xa11, 1});
  CHECK(req.target_address == jm_name);
  CHECK(req.resource_manager_id == token);
  bool fenced = false;
  for (auto& rec : trace())
    if (rec.dir == direction::receive && rec.method == "request_slot" && rec.to == tm->id)
      fenced = rec.token == token;
  CHECK(fenced);
  const auto* s = slots().slot(slot0);
  REQUIRE(s != nullptr);
  CHECK(s->state == rm::slot_state::allocated);
  CHECK(s->job == job_a);
  CHECK(slots().number_of_free_slots() == 1);
  CHECK(test::contains_in_order(trace(),
                                {{direction::receive, "register_task_executor"},
                                 {direction::receive, "register_job_manager"},
                                 {direction::receive, "request_slot"},
                                 {direction::send, "request_slot"},
                                 {direction::response, "request_slot"}}));
  (void)instance;
  (void)jmp;
}

TEST_CASE_FIXTURE(rm_fixture,
                  "a slot request waits until a TaskExecutor registers, then is served") {
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  CHECK(slots().number_of_pending_requests() == 1);
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  REQUIRE(tm->slot_requests.size() == 1);
  CHECK(tm->slot_requests[0].allocation_id == cluster::allocation_id{0xa11, 1});
  CHECK(slots().number_of_pending_requests() == 0);
  (void)jmp;
}

TEST_CASE_FIXTURE(
  rm_fixture, "a TaskExecutor refusing a slot as occupied makes the request move to another slot") {
  auto tm1 = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm1);
  tm1->request_slot_answer = errc::rejected;
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  CHECK(tm1->slot_requests.size() == 1);
  CHECK(slots().number_of_pending_requests() == 1);
  auto tm2 = spawn_task_executor("task_executor/tm-2", 1);
  register_and_report(tm2);
  REQUIRE(tm2->slot_requests.size() == 1);
  CHECK(slots().number_of_pending_requests() == 0);
  (void)jmp;
}

TEST_CASE_FIXTURE(
  rm_fixture, "slot requests of unknown JobMasters or with a wrong JobMasterId get clear errors") {
  auto jmp = spawn_job_master();
  auto unknown = request_slot(1, jm_token, graph::job_id{7, 7});
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == errc::not_found);
  CHECK(unknown.error().message.find("Could not find registered job manager") != std::string::npos);
  auto wrong = request_slot(2, rpc::fencing_token{5, 5});
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().code == errc::rejected);
  CHECK(wrong.error().message.find("does not match") != std::string::npos);
  CHECK(slots().number_of_pending_requests() == 0);
  // The RM keeps serving.
  CHECK(request_slot(3).has_value());
  CHECK(slots().number_of_pending_requests() == 1);
  (void)jmp;
}

TEST_CASE_FIXTURE(rm_fixture, "slot reports in heartbeats keep the slot manager current") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  CHECK(slots().number_of_free_slots() == 0);
  // The TaskExecutor freed the slot; the next heartbeat says so.
  tm->report = free_report(tm->id, 1);
  step_to(10s);
  CHECK(slots().number_of_free_slots() == 1);
  (void)jmp;
}

TEST_CASE_FIXTURE(
  rm_fixture, "a TaskExecutor whose heartbeats stop loses its slots and its JobMaster is told") {
  auto tm = spawn_task_executor("task_executor/tm-1", 2);
  register_and_report(tm);
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  step_to(25s);
  CHECK(rmx().is_registered_task_executor(tm->id));
  tm->answer_heartbeats = false; // last heartbeat at 20 s
  step_to(69s);
  CHECK(rmx().is_registered_task_executor(tm->id));
  CHECK(jmp->lost_task_managers.empty());
  step_to(71s);
  CHECK_FALSE(rmx().is_registered_task_executor(tm->id));
  CHECK(slots().number_of_registered_slots() == 0);
  CHECK(slots().number_of_task_managers() == 0);
  REQUIRE(jmp->lost_task_managers.size() == 1);
  CHECK(jmp->lost_task_managers[0].resource_id == tm->id);
  CHECK(jmp->lost_task_managers[0].cause.find("timed out") != std::string::npos);
  REQUIRE(tm->disconnects.size() == 1);
  bool fenced_with_jm_id = false;
  for (auto& rec : trace())
    if (rec.dir == direction::receive && rec.method == "disconnect_task_manager"
        && rec.to == jm_name)
      fenced_with_jm_id = rec.token == jm_token;
  CHECK(fenced_with_jm_id);
  // The JobMaster itself kept answering: still registered.
  CHECK(rmx().is_registered_job_manager(job_a));
}

TEST_CASE_FIXTURE(
  rm_fixture,
  "a request still pending after slot.request.timeout fails and its JobMaster learns of it") {
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  step_to(299s, 10s);
  CHECK(jmp->failed_slots.empty());
  step_to(300s);
  REQUIRE(jmp->failed_slots.size() == 1);
  CHECK(jmp->failed_slots[0].allocation_id == cluster::allocation_id{0xa11, 1});
  CHECK(jmp->failed_slots[0].cause.find("slot.request.timeout") != std::string::npos);
  CHECK(slots().number_of_pending_requests() == 0);
}

TEST_CASE_FIXTURE(rm_fixture,
                  "a JobMaster whose heartbeats stop is dropped with its pending requests") {
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  jmp->answer_heartbeats = false;
  step_to(61s);
  CHECK_FALSE(rmx().is_registered_job_manager(job_a));
  CHECK(slots().number_of_pending_requests() == 0);
  REQUIRE(jmp->disconnects.size() == 1);
  CHECK(jmp->disconnects[0].resource_manager_id == token);
}

TEST_CASE_FIXTURE(rm_fixture,
                  "an idle TaskExecutor is reported after resourcemanager.taskmanager-timeout") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  step_to(29s);
  CHECK(rmx().idle_releases() == 0);
  step_to(30s);
  CHECK(rmx().idle_releases() == 1);
  // A standalone RM cannot stop it: it stays registered.
  CHECK(rmx().is_registered_task_executor(tm->id));
}

TEST_CASE_FIXTURE(rm_fixture,
                  "a TaskExecutor that disconnects loses its slots, and its JobMasters are told") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  auto r = ask_from<rm::disconnect_task_manager>(
    handle_of(tm->id), rm::disconnect_task_manager_request{tm->id, "shutting down"});
  CHECK(r.has_value());
  CHECK(slots().number_of_registered_slots() == 0);
  REQUIRE(jmp->lost_task_managers.size() == 1);
  CHECK(jmp->lost_task_managers[0].cause == "shutting down");
  auto again = ask_from<rm::disconnect_task_manager>(
    handle_of(tm->id), rm::disconnect_task_manager_request{tm->id, "x"});
  CHECK(again.error().code == errc::not_found);
}

TEST_CASE_FIXTURE(
  rm_fixture,
  "a TaskExecutor that refuses a slot request as not ours is dropped instead of asked again and again") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  tm->request_slot_answer = errc::fencing_token_mismatch;
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value());
  CHECK(tm->slot_requests.size() == 1);
  CHECK_FALSE(rmx().is_registered_task_executor(tm->id));
  CHECK(slots().number_of_pending_requests() == 1);
  REQUIRE(tm->disconnects.size() == 1);
  (void)jmp;
}

TEST_CASE_FIXTURE(rm_fixture,
                  "each slot request logs the job's resource requirements in Flink's words") {
  auto tm = spawn_task_executor("task_executor/tm-1", 1);
  register_and_report(tm);
  auto jmp = spawn_job_master();
  CHECK(request_slot(1).has_value()); // served: the TaskExecutor's slot is allocated
  CHECK(request_slot(2).has_value()); // pending: no free slot
  const auto line = "Received resource requirements from job " + job_a.to_string()
                    + ": [ResourceRequirement{resourceProfile=ResourceProfile{UNKNOWN}, "
                      "numberOfRequiredSlots=";
  CHECK(logged(line + "1}]"));
  CHECK(logged(line + "2}]"));
  // A resent request changes nothing and is not logged again.
  log_sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100);
  log->sinks() = {log_sink};
  CHECK(request_slot(2).has_value());
  CHECK_FALSE(logged("Received resource requirements"));
}
