#include "runtime/actors/task_executor/task_executor.hpp"

#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"

#include "runtime/common/logging.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/job_leader_service.hpp"
#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"

namespace flint::task_executor {

namespace rm = flint::resource_manager;

namespace {

struct task_record {
  caf::actor handle;
  std::string name;
  graph::job_id job;
  cluster::allocation_id allocation;
  graph::execution_state state = graph::execution_state::created;
  /// Raised before a cancel or fail mail, so a long step stops between two records.
  std::shared_ptr<std::atomic<bool>> interrupt;

  /// Cancels (empty cause) or fails the task: the flag first, then the mail.
  void stop(const std::string& cause = {}) const {
    interrupt->store(true, std::memory_order_relaxed);
    if (cause.empty())
      caf::anon_send(handle, task_cancel_atom::value);
    else
      caf::anon_send(handle, task_fail_atom::value, cause);
  }
};

using rm_registration =
  registration::retrying_registration<rm::task_executor_registration_success>;

} // namespace

// -- listeners ------------------------------------------------------------------------------------

class task_executor::rm_leader_listener final : public leader::leader_retrieval_listener {
public:
  explicit rm_leader_listener(task_executor& te) : te_(te) {}
  // Any thread: into the main thread first.
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token& id) override {
    te_.run_async([te = &te_, address, id] { te->notify_of_new_resource_manager_leader(address, id); });
  }

private:
  task_executor& te_;
};

class task_executor::job_leader_events final : public job_leader_listener {
public:
  explicit job_leader_events(task_executor& te) : te_(te) {}
  void job_manager_gained_leadership(const graph::job_id& job, const cluster::job_master_id& id,
                                     const leader::leader_address& address,
                                     const job_master::task_manager_registration_success& success) override {
    te_.establish_job_manager_connection(job, id, address, success.job_master_resource_id);
  }
  void job_manager_lost_leadership(const graph::job_id& job, const cluster::job_master_id& id) override;

private:
  task_executor& te_;
};

// -- state ----------------------------------------------------------------------------------------

struct task_executor::state {
  explicit state(task_executor& te)
    : slots(te.config_.resource_id, te.config_.number_of_slots, te.config_.default_slot_profile),
      rm_listener(te),
      rm_hb_listener("The heartbeat of ResourceManager", "ResourceManager",
                     [&te](const heartbeat::resource_id&, const std::string& cause) {
                       te.reconnect_to_resource_manager(cause);
                     },
                     {},
                     [&te](const heartbeat::resource_id&) {
                       return rm::encode_slot_report(te.st_->slots.create_slot_report());
                     }),
      jm_hb_listener("The heartbeat of JobManager", "JobManager",
                     [&te](const heartbeat::resource_id& id, const std::string& cause) {
                       te.job_manager_lost(id, cause);
                     }),
      job_events(te) {}

  task_slot_table slots;
  job_table jobs;
  rm_leader_listener rm_listener;
  heartbeat::peer_heartbeat_listener rm_hb_listener;
  heartbeat::peer_heartbeat_listener jm_hb_listener;
  job_leader_events job_events;
  std::unique_ptr<leader::leader_retrieval_service> rm_retrieval;
  std::optional<heartbeat::heartbeat_manager> rm_heartbeat;
  std::optional<heartbeat::heartbeat_manager> jm_heartbeat;
  std::optional<job_leader_service> job_leaders;

  // The ResourceManager connection. `rm_epoch` tells answers of an older attempt apart.
  leader::leader_address rm_address;
  rpc::fencing_token rm_id;
  std::unique_ptr<rm_registration> rm_registration_;
  bool rm_established = false;
  cluster::instance_id rm_instance;
  cluster::resource_id rm_resource_id;
  rpc::gateway rm_gateway;
  std::uint64_t rm_epoch = 0;

  std::map<graph::execution_attempt_id, task_record> tasks;

  /// Allocations whose slot times out unless it becomes active; the ticket tells a timer of an
  /// earlier registration apart.
  std::map<cluster::allocation_id, std::uint64_t> slot_timeouts;
  std::uint64_t next_slot_ticket = 0;
};

void task_executor::job_manager_lost(const heartbeat::resource_id& id, const std::string& cause) {
  auto job = st_->jobs.job_of_job_master(id);
  if (!job)
    return;
  // Flink: fail the job's tasks, keep its slots (inactive) and register again; the new
  // connection offers them anew.
  for (const auto& allocation : st_->slots.allocations_of(*job)) {
    fail_tasks_of(allocation, cause);
    mark_slot_inactive(allocation);
  }
  close_job_manager_connection(*job, cause, false);
  if (st_->job_leaders)
    st_->job_leaders->reconnect(*job);
}

void task_executor::job_leader_events::job_manager_lost_leadership(const graph::job_id& job,
                                                                   const cluster::job_master_id&) {
  auto& st = *te_.st_;
  for (const auto& allocation : st.slots.allocations_of(job)) {
    te_.fail_tasks_of(allocation, "JobManager for job " + job.to_string() + " lost leadership.");
    te_.mark_slot_inactive(allocation);
  }
  te_.close_job_manager_connection(job, "JobManager lost leadership", false);
}

// -- endpoint -------------------------------------------------------------------------------------

task_executor::task_executor(caf::actor_config& cfg, rpc::endpoint_context ctx,
                             task_executor_config config, task_executor_services services)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    config_(std::move(config)),
    services_(std::move(services)),
    log_(services_.logger ? services_.logger : make_endpoint_logger(endpoint_id())) {
  if (config_.resource_id.empty())
    config_.resource_id = endpoint_id();
}

task_executor::~task_executor() = default;

const task_slot_table& task_executor::slot_table() const {
  return st_->slots;
}

const job_table& task_executor::jobs() const {
  return st_->jobs;
}

bool task_executor::is_connected_to_resource_manager() const {
  return st_ && st_->rm_established;
}

cluster::resource_manager_id task_executor::resource_manager_id() const {
  return st_ && st_->rm_established ? st_->rm_id : cluster::resource_manager_id{};
}

std::size_t task_executor::number_of_running_tasks() const {
  return st_ ? st_->tasks.size() : 0;
}

caf::actor task_executor::task_of(const graph::execution_attempt_id& attempt) const {
  if (!st_)
    return {};
  auto i = st_->tasks.find(attempt);
  return i == st_->tasks.end() ? caf::actor{} : i->second.handle;
}

rpc::fencing_token task_executor::expected_token(const rpc::envelope& e) const {
  if (!st_)
    return {};
  if (e.fencing_scope == rm_scope)
    return st_->rm_established ? st_->rm_id : rpc::fencing_token{};
  if (auto job = graph::job_id::from_string(e.fencing_scope))
    if (auto id = st_->jobs.job_master_id_of(*job))
      return *id;
  return {};
}

void task_executor::on_start() {
  st_ = std::make_unique<state>(*this);
  auto& st = *st_;
  st.rm_heartbeat.emplace(heartbeat::heartbeat_role::receiver, config_.resource_id,
                          config_.heartbeat, st.rm_hb_listener, *this);
  st.jm_heartbeat.emplace(heartbeat::heartbeat_role::receiver, config_.resource_id,
                          config_.heartbeat, st.jm_hb_listener, *this);
  register_methods();
  if (services_.directory != nullptr)
    services_.directory->put(endpoint_id(), caf::actor_cast<caf::actor>(this));
  if (services_.ha != nullptr) {
    job_master::register_task_manager_request registration{
      endpoint_id(), cluster::task_manager_location{config_.resource_id, config_.host, config_.data_port}};
    auto* directory = services_.directory;
    st.job_leaders.emplace(*this, *services_.ha, config_.registration, std::move(registration),
                           st.job_events, [directory](const std::string& id) -> std::optional<caf::actor> {
                             if (directory == nullptr)
                               return std::nullopt;
                             return directory->lookup(id);
                           });
    st.rm_retrieval = services_.ha->resource_manager_retrieval();
    st.rm_retrieval->start(st.rm_listener);
  }
}

void task_executor::on_exit() {
  if (st_) {
    auto& st = *st_;
    // Flink's TaskExecutor.onStop: tell the JobMasters and the ResourceManager at once, so they
    // fail the tasks and drop the slots now rather than when the heartbeats time out.
    const std::string cause = "The TaskExecutor is shutting down.";
    for (const auto& job : st.jobs.jobs())
      if (const auto* entry = st.jobs.get(job); entry != nullptr && entry->connection)
        entry->connection->gateway.tell<job_master::disconnect_task_manager>(
          *this, job_master::disconnect_task_manager_request{config_.resource_id, cause});
    if (st.rm_established)
      close_resource_manager_connection(cause);
    if (st.rm_retrieval)
      st.rm_retrieval->stop();
    if (st.rm_registration_)
      st.rm_registration_->cancel();
    if (st.job_leaders)
      st.job_leaders->stop();
    if (st.rm_heartbeat)
      st.rm_heartbeat->stop();
    if (st.jm_heartbeat)
      st.jm_heartbeat->stop();
    for (auto& [attempt, t] : st.tasks)
      caf::anon_send_exit(t.handle, caf::exit_reason::user_shutdown);
    st.tasks.clear();
    // Drop every peer handle (JobMasters, the ResourceManager, heartbeat targets): they hold
    // ours too, and handles held both ways keep both actors from ever being freed.
    st.job_leaders.reset();
    st.jobs = job_table{};
    st.rm_heartbeat.reset();
    st.jm_heartbeat.reset();
    st.rm_registration_.reset();
    st.rm_retrieval.reset();
    st.rm_gateway = rpc::gateway{};
    st.rm_address = leader::leader_address{};
  }
  if (services_.directory != nullptr)
    services_.directory->remove(endpoint_id());
  rpc::rpc_endpoint::on_exit();
}

// -- methods --------------------------------------------------------------------------------------

void task_executor::register_methods() {
  using rpc::fencing;

  handle<request_slot>(fencing::fenced, [this](request_slot_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    log_->info("Receive slot request " + req.allocation_id.to_string() + " for job "
               + req.job_id.to_string() + " from resource manager with leader id "
               + req.resource_manager_id.to_string() + ".");
    if (!st.rm_established || req.resource_manager_id != st.rm_id)
      return make_error(errc::fencing_token_mismatch,
                        "TaskManager " + config_.resource_id
                          + " is not connected to the resource manager "
                          + req.resource_manager_id.to_string() + ".");
    if (req.slot.owner != config_.resource_id)
      return make_error(errc::invalid_argument, "slot " + req.slot.to_string()
                                                  + " does not belong to TaskExecutor "
                                                  + config_.resource_id + ".");
    if (auto r = st.slots.allocate_slot(req.slot.slot_number, req.job_id, req.allocation_id,
                                        req.profile);
        !r)
      return r.error();
    log_->info("Allocated slot for " + req.allocation_id.to_string() + ".");
    if (st.slots.slot_of(req.allocation_id)->state == task_slot_state::allocated)
      register_slot_timeout(req.allocation_id);
    auto [entry, created] = st.jobs.get_or_create(req.job_id, req.target_address);
    if (st.job_leaders && !st.job_leaders->contains_job(req.job_id)) {
      log_->info("Add job " + req.job_id.to_string() + " for job leader monitoring.");
      st.job_leaders->add_job(req.job_id);
    }
    if (entry->connection)
      offer_slots_to_job_manager(req.job_id);
    return rpc::ack{};
  });

  handle<submit_task>(fencing::fenced, [this](submit_task_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    const auto& tdd = req.tdd;
    auto* entry = st.jobs.get(tdd.job_id);
    if (entry == nullptr || !entry->connection)
      return make_error(errc::illegal_state,
                        "Could not submit task because there is no JobManager associated for the job "
                          + tdd.job_id.to_string() + ".");
    if (entry->connection->job_master_id != req.job_master_id)
      return make_error(errc::fencing_token_mismatch,
                        "Rejecting the task submission because the job manager leader id "
                          + req.job_master_id.to_string()
                          + " does not match the expected job manager leader id "
                          + entry->connection->job_master_id.to_string() + ".");
    if (!st.slots.try_mark_slot_active(tdd.job_id, req.allocation_id))
      return make_error(errc::not_found, "No task slot allocated for job ID " + tdd.job_id.to_string()
                                           + " and allocation ID " + req.allocation_id.to_string()
                                           + ".");
    unregister_slot_timeout(req.allocation_id);
    auto attempt = task::attempt_of(tdd);
    if (auto r = st.slots.add_task(attempt, tdd.job_id, req.allocation_id); !r)
      return r.error();
    log_->info("Received task " + tdd.task_name + " (" + attempt.to_string() + "), deploy into slot with allocation id "
               + req.allocation_id.to_string() + ".");
    auto te_addr = address();
    auto* self = this;
    auto interrupt = std::make_shared<std::atomic<bool>>(false);
    task_setup setup{tdd, req.allocation_id, services_.invokables,
                     [te_addr, self](const cluster::task_execution_state& s) {
                       // The closure runs only if the TaskExecutor still lives: in its thread.
                       if (auto te = caf::actor_cast<caf::actor>(te_addr))
                         caf::anon_send(te, rpc::run_atom::value,
                                        std::function<void()>([self, s] { self->on_task_state(s); }));
                     },
                     interrupt};
    auto handle = config_.detached_tasks
                    ? home_system().spawn<task, caf::detached>(std::move(setup))
                    : home_system().spawn<task>(std::move(setup));
    st.tasks[attempt] = task_record{handle, tdd.task_name, tdd.job_id, req.allocation_id,
                                    graph::execution_state::created, interrupt};
    return rpc::ack{};
  });

  handle<cancel_task>(fencing::fenced, [this](cancel_task_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    auto i = st.tasks.find(req.attempt);
    if (i == st.tasks.end() || i->second.job != req.job_id)
      return make_error(errc::not_found, "Cannot find task to cancel for execution "
                                           + req.attempt.to_string() + " of job "
                                           + req.job_id.to_string() + ".");
    log_->info("Attempting to cancel task " + i->second.name + " (" + req.attempt.to_string() + ").");
    i->second.stop();
    return rpc::ack{};
  });

  handle<free_slot>(fencing::fenced, [this](free_slot_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    const auto* s = st.slots.slot_of(req.allocation_id);
    if (s == nullptr)
      return make_error(errc::not_found, "TaskExecutor " + config_.resource_id
                                           + " has no slot allocated under "
                                           + req.allocation_id.to_string() + ".");
    if (s->job != req.job_id)
      return make_error(errc::rejected, "The slot of allocation " + req.allocation_id.to_string()
                                          + " belongs to another job than "
                                          + req.job_id.to_string() + ".");
    free_slot_internal(req.allocation_id, req.cause);
    return rpc::ack{};
  });

  handle<heartbeat_from_resource_manager>(fencing::fenced, heartbeat::serve_request_heartbeat(*st_->rm_heartbeat));
  handle<heartbeat_from_job_manager>(fencing::fenced, heartbeat::serve_request_heartbeat(*st_->jm_heartbeat));

  handle<disconnect_job_manager>(fencing::fenced, [this](disconnect_job_manager_request req)
                                                    -> expected<rpc::ack> {
    auto& st = *st_;
    // The JobMaster is gone: stop following it, fail its tasks, free its slots.
    close_job_manager_connection(req.job_id, req.cause, false);
    if (st.job_leaders)
      st.job_leaders->remove_job(req.job_id);
    for (const auto& allocation : st.slots.allocations_of(req.job_id))
      free_slot_internal(allocation, req.cause);
    if (!st.slots.has_allocated_slots(req.job_id))
      st.jobs.remove(req.job_id);
    release_partitions_of(req.job_id);
    return rpc::ack{};
  });

  handle<release_partitions>(fencing::fenced, [this](release_partitions_request req) -> expected<rpc::ack> {
    if (services_.release_partitions) {
      log_->info("Releasing " + std::to_string(req.partitions.size()) + " result partition(s) of job "
                 + req.job_id.to_string() + ": their consumers are done.");
      services_.release_partitions(req.job_id, req.partitions);
    }
    close_job_manager_connection_if_no_allocated_resources(req.job_id);
    return rpc::ack{};
  });

  handle<disconnect_resource_manager>(fencing::fenced, [this](disconnect_resource_manager_request req)
                                                         -> expected<rpc::ack> {
    reconnect_to_resource_manager(req.cause);
    return rpc::ack{};
  });
}

// -- ResourceManager connection ---------------------------------------------------------------------

void task_executor::notify_of_new_resource_manager_leader(const leader::leader_address& address,
                                                          const rpc::fencing_token& id) {
  auto& st = *st_;
  if (!id.is_nil() && id == st.rm_id && address.endpoint_id == st.rm_address.endpoint_id)
    return;
  close_resource_manager_connection("ResourceManager leader changed to new address "
                                    + (address.endpoint_id.empty() ? std::string("<none>") : address.endpoint_id)
                                    + ".");
  st.rm_address = address;
  st.rm_id = id;
  if (!id.is_nil() && !address.empty())
    connect_to_resource_manager();
}

void task_executor::connect_to_resource_manager() {
  auto& st = *st_;
  auto epoch = ++st.rm_epoch;
  auto address = st.rm_address;
  auto id = st.rm_id;
  auto peer = address.handle;
  if (!peer && services_.directory != nullptr)
    peer = services_.directory->lookup(address.endpoint_id).value_or(caf::actor{});
  rm::task_executor_registration_request req{endpoint_id(),          config_.resource_id,
                                             config_.data_port,      config_.host,
                                             config_.default_slot_profile, config_.number_of_slots};
  log_->info("Connecting to ResourceManager " + address.endpoint_id + "(" + id.to_string() + ").");
  st.rm_registration_ = std::make_unique<rm_registration>(
    *this, "ResourceManager " + address.endpoint_id, config_.registration,
    [this, peer, address, id, req](std::chrono::nanoseconds timeout, rm_registration::done_fn done) {
      if (!peer) {
        done(make_error(errc::unreachable, "no handle for ResourceManager " + address.endpoint_id));
        return;
      }
      rpc::gateway(peer, address.endpoint_id, id)
        .ask<rm::register_task_executor>(*this, req, std::move(done), timeout);
    },
    [this, epoch, peer, address, id](rm::task_executor_registration_success success) {
      auto& st = *st_;
      if (st.rm_epoch != epoch)
        return;
      log_->info("Successful registration at resource manager " + address.endpoint_id
                 + " under registration id " + success.registration_id.to_string() + ".");
      st.rm_established = true;
      st.rm_instance = success.registration_id;
      st.rm_resource_id = success.resource_manager_resource_id;
      st.rm_gateway = rpc::gateway(peer, address.endpoint_id, id);
      st.rm_heartbeat->monitor_target(
        st.rm_resource_id,
        heartbeat::make_heartbeat_target<rm::heartbeat_from_task_manager, rm::heartbeat_from_task_manager>(
          st.rm_gateway, *this));
      st.rm_gateway.ask<rm::send_slot_report>(
        *this, rm::send_slot_report_request{config_.resource_id, st.rm_instance, st.slots.create_slot_report()},
        [this, epoch](expected<rpc::ack> r) {
          if (!r && st_->rm_epoch == epoch)
            reconnect_to_resource_manager("Failed to send initial slot report to ResourceManager: "
                                          + r.error().to_string());
        });
    });
  st.rm_registration_->start();
}

void task_executor::close_resource_manager_connection(const std::string& cause) {
  auto& st = *st_;
  ++st.rm_epoch;
  if (st.rm_registration_)
    st.rm_registration_->cancel();
  st.rm_registration_.reset();
  if (st.rm_established) {
    log_->info("Close ResourceManager connection " + st.rm_resource_id + ": " + cause);
    st.rm_heartbeat->unmonitor_target(st.rm_resource_id);
    st.rm_gateway.tell<rm::disconnect_task_manager>(
      *this, rm::disconnect_task_manager_request{config_.resource_id, cause});
  }
  st.rm_established = false;
  st.rm_instance = {};
  st.rm_resource_id.clear();
  st.rm_gateway = {};
}

void task_executor::reconnect_to_resource_manager(const std::string& cause) {
  close_resource_manager_connection(cause);
  if (!st_->rm_id.is_nil() && !st_->rm_address.empty())
    connect_to_resource_manager();
}

// -- JobMaster connections ------------------------------------------------------------------------

void task_executor::establish_job_manager_connection(const graph::job_id& job,
                                                     const cluster::job_master_id& id,
                                                     const leader::leader_address& address,
                                                     const cluster::resource_id& job_master_resource_id) {
  auto& st = *st_;
  auto* entry = st.jobs.get(job);
  if (entry == nullptr)
    return; // its slots were freed meanwhile
  if (entry->connection) {
    if (entry->connection->job_master_id == id)
      return;
    close_job_manager_connection(job, "JobManager leader changed", false);
  }
  auto peer = address.handle;
  if (!peer && services_.directory != nullptr)
    peer = services_.directory->lookup(address.endpoint_id).value_or(caf::actor{});
  log_->info("Successful registration at job manager " + address.endpoint_id + " for job "
             + job.to_string() + ".");
  log_->info("Establish JobManager connection for job " + job.to_string() + ".");
  rpc::gateway gw(peer, address.endpoint_id, id);
  st.jobs.connect(job, job_master_connection{id, job_master_resource_id, gw});
  st.jm_heartbeat->monitor_target(
    job_master_resource_id,
    heartbeat::make_heartbeat_target<job_master::heartbeat_from_task_manager,
                                     job_master::heartbeat_from_task_manager>(gw, *this));
  offer_slots_to_job_manager(job);
}

void task_executor::close_job_manager_connection(const graph::job_id& job, const std::string& cause,
                                                 bool release_job) {
  auto& st = *st_;
  if (auto conn = st.jobs.disconnect(job)) {
    log_->info("Close JobManager connection for job " + job.to_string() + ": " + cause);
    st.jm_heartbeat->unmonitor_target(conn->job_master_resource_id);
  }
  if (release_job) {
    st.jobs.remove(job);
    if (st.job_leaders)
      st.job_leaders->remove_job(job);
    release_partitions_of(job);
  }
}

void task_executor::release_partitions_of(const graph::job_id& job) {
  if (services_.release_job_partitions && holds_partitions_of(job)) {
    log_->info("Releasing the result partitions of job " + job.to_string() + ".");
    services_.release_job_partitions(job);
  }
}

void task_executor::offer_slots_to_job_manager(const graph::job_id& job) {
  auto& st = *st_;
  auto* entry = st.jobs.get(job);
  if (entry == nullptr || !entry->connection)
    return;
  auto offers = st.slots.offers_for(job);
  if (offers.empty())
    return;
  auto id = entry->connection->job_master_id;
  log_->info("Offer reserved slots to the leader of job " + job.to_string() + ".");
  entry->connection->gateway.ask<job_master::offer_slots>(
    *this, job_master::offer_slots_request{config_.resource_id, offers},
    [this, job, id, offers](expected<job_master::offer_slots_response> r) {
      auto& st = *st_;
      auto* entry = st.jobs.get(job);
      if (entry == nullptr || !entry->connection || entry->connection->job_master_id != id)
        return; // answer of an older connection
      if (!r) {
        if (r.error().code == errc::timeout) {
          offer_slots_to_job_manager(job);
          return;
        }
        for (const auto& o : offers)
          free_slot_internal(o.allocation, "Could not offer slots: " + r.error().to_string());
        return;
      }
      for (const auto& o : offers) {
        bool accepted = std::any_of(r->accepted.begin(), r->accepted.end(),
                                    [&](const cluster::slot_offer& a) { return a.allocation == o.allocation; });
        const auto* s = st.slots.slot_of(o.allocation);
        if (s == nullptr || s->job != job)
          continue; // freed meanwhile
        if (accepted) {
          (void) st.slots.mark_slot_active(o.allocation);
          unregister_slot_timeout(o.allocation);
        } else {
          free_slot_internal(o.allocation, "The slot " + std::to_string(o.slot_index)
                                             + " was rejected by the JobMaster of job "
                                             + job.to_string() + ".");
        }
      }
    });
}

// -- slots and tasks ------------------------------------------------------------------------------

void task_executor::fail_tasks_of(const cluster::allocation_id& allocation, const std::string& cause) {
  auto& st = *st_;
  for (const auto& attempt : st.slots.tasks_of(allocation))
    if (auto i = st.tasks.find(attempt); i != st.tasks.end())
      i->second.stop(cause);
}

void task_executor::free_slot_internal(const cluster::allocation_id& allocation,
                                       const std::string& cause) {
  auto& st = *st_;
  const auto* s = st.slots.slot_of(allocation);
  if (s == nullptr)
    return;
  auto job = *s->job;
  log_->info("Free slot with allocation id " + allocation.to_string() + " because: " + cause);
  fail_tasks_of(allocation, cause);
  auto freed = st.slots.free_slot(allocation);
  if (freed && freed->has_value())
    after_slot_freed(job, **freed, allocation);
  // Otherwise the slot is RELEASING until its tasks report their final state.
}

void task_executor::register_slot_timeout(const cluster::allocation_id& allocation) {
  auto& st = *st_;
  auto ticket = ++st.next_slot_ticket;
  st.slot_timeouts[allocation] = ticket;
  schedule_run_async(
    [this, allocation, ticket] {
      auto& st = *st_;
      auto i = st.slot_timeouts.find(allocation);
      if (i == st.slot_timeouts.end() || i->second != ticket)
        return;
      st.slot_timeouts.erase(i);
      free_slot_internal(allocation, "The slot " + allocation.to_string() + " has timed out.");
    },
    config_.slot_timeout);
}

void task_executor::unregister_slot_timeout(const cluster::allocation_id& allocation) {
  st_->slot_timeouts.erase(allocation);
}

void task_executor::mark_slot_inactive(const cluster::allocation_id& allocation) {
  // Inactive slots wait for a JobMaster to accept them again, for `slot_timeout` at most.
  if (auto r = st_->slots.mark_slot_inactive(allocation); r && *r)
    register_slot_timeout(allocation);
}

void task_executor::after_slot_freed(const graph::job_id& job, std::int32_t index,
                                     const cluster::allocation_id& allocation) {
  auto& st = *st_;
  unregister_slot_timeout(allocation);
  if (st.rm_established)
    st.rm_gateway.tell<rm::notify_slot_available>(
      *this, rm::notify_slot_available_request{st.rm_instance,
                                               cluster::slot_id{config_.resource_id, index}, allocation});
  close_job_manager_connection_if_no_allocated_resources(job);
}

bool task_executor::holds_partitions_of(const graph::job_id& job) const {
  return services_.holds_partitions && services_.holds_partitions(job);
}

void task_executor::close_job_manager_connection_if_no_allocated_resources(const graph::job_id& job) {
  // Blocking partitions of the job are resources too, read later by consumers of the next stage:
  // they keep the job here.
  if (st_->slots.has_allocated_slots(job) || holds_partitions_of(job))
    return;
  close_job_manager_connection(job, "TaskExecutor " + config_.resource_id
                                      + " has no more allocated slots or partitions for job " + job.to_string()
                                      + ".",
                               true);
}

void task_executor::on_task_state(const cluster::task_execution_state& s) {
  auto& st = *st_;
  auto i = st.tasks.find(s.attempt);
  if (i == st.tasks.end())
    return;
  log_->info(i->second.name + " (" + s.attempt.to_string() + ") switched from "
             + std::string(graph::to_string(i->second.state)) + " to "
             + std::string(graph::to_string(s.state)) + "."
             + (s.failure_cause.empty() ? std::string() : " Cause: " + s.failure_cause));
  i->second.state = s.state;
  if (auto* entry = st.jobs.get(s.job); entry != nullptr && entry->connection)
    entry->connection->gateway.ask<job_master::update_task_execution_state>(
      *this, s, [this, attempt = s.attempt](expected<rpc::ack> r) {
        // Flink's TaskManagerActions#updateTaskExecutionState: a task the JobMaster does not know
        // (an attempt older than its current one, after a restart) must not run on beside it.
        if (r || r.error().code != errc::not_found)
          return;
        if (auto t = st_->tasks.find(attempt); t != st_->tasks.end()) {
          log_->info("Failing task " + t->second.name + " (" + attempt.to_string()
                     + ") because the JobMaster refused its state update: " + r.error().message);
          t->second.stop(r.error().message);
        }
      });
  if (!graph::is_terminal(s.state))
    return;
  st.tasks.erase(i);
  if (auto removed = st.slots.remove_task(s.attempt); removed && removed->freed_slot)
    after_slot_freed(s.job, *removed->freed_slot, removed->allocation);
}

} // namespace flint::task_executor
