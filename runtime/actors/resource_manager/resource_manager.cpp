#include "runtime/actors/resource_manager/resource_manager.hpp"

#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"

#include "runtime/common/logging.hpp"

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <caf/actor_cast.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actors/heartbeat/endpoint_executor.hpp"
#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"

namespace flint::resource_manager {

namespace {

struct task_executor_registration {
  cluster::resource_id id;
  cluster::instance_id instance;
  std::string address;
  caf::actor handle;
  std::uint16_t data_port = 0;
  /// Whether its first slot report reached the SlotManager.
  bool reported = false;
};

struct job_manager_registration {
  graph::job_id job;
  cluster::job_master_id job_master_id;
  cluster::resource_id resource_id;
  std::string address;
  caf::actor handle;
};

std::string no_leader_text(const std::string& what) {
  return "The ResourceManager is not the leader: cannot " + what + ".";
}

} // namespace

// -- listeners and actions ------------------------------------------------------------------------

class resource_manager::actions final : public slot_manager_actions {
public:
  explicit actions(resource_manager& rm) : rm_(rm) {}
  void allocate_slot(const cluster::instance_id& instance, const cluster::resource_id& tm,
                     const cluster::slot_id& slot, const slot_request& request) override {
    rm_.allocate_slot(instance, tm, slot, request);
  }
  void notify_allocation_failure(const graph::job_id& job, const cluster::allocation_id& allocation,
                                 const std::string& target, const error& cause) override {
    rm_.notify_allocation_failure(job, allocation, target, cause);
  }
  void release_resource(const cluster::instance_id& instance, const cluster::resource_id& tm,
                        const std::string& cause) override {
    rm_.release_resource(instance, tm, cause);
  }

private:
  resource_manager& rm_;
};

// -- state ----------------------------------------------------------------------------------------

struct resource_manager::state {
  explicit state(resource_manager& rm)
    : executor(rm),
      tm_listener("The heartbeat of TaskManager", "TaskManager",
                  [&rm](const heartbeat::resource_id& id, const std::string& cause) {
                    rm.close_task_manager_connection(id, cause, true);
                  },
                  [&rm](const heartbeat::resource_id& id, const heartbeat::payload& data) {
                    rm.task_manager_heartbeat_payload(id, data);
                  }),
      jm_listener("The heartbeat of JobManager", "JobManager",
                  [&rm](const heartbeat::resource_id& id, const std::string& cause) {
                    if (const auto* reg = rm.st_->jm_by_resource(id))
                      rm.close_job_manager_connection(reg->job, cause, true);
                  }),
      slot_actions(rm),
      // Random per run, as Flink's InstanceID: a restarted ResourceManager must not hand out its
      // predecessor's registration ids, or a stale registration would pass for a current one.
      rng(std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
          std::hash<std::string>{}(rm.endpoint_id())) {}

  heartbeat::endpoint_executor executor;
  heartbeat::peer_heartbeat_listener tm_listener;
  heartbeat::peer_heartbeat_listener jm_listener;
  actions slot_actions;
  std::mt19937_64 rng;

  /// Everything below exists only while leading. `epoch` tells late answers from an earlier
  /// leadership apart.
  std::uint64_t epoch = 0;
  std::optional<slot_manager> slots;
  std::optional<heartbeat::heartbeat_manager> tm_heartbeats;
  std::optional<heartbeat::heartbeat_manager> jm_heartbeats;
  std::map<cluster::resource_id, task_executor_registration> task_executors;
  std::map<cluster::instance_id, cluster::resource_id> by_instance;
  std::map<graph::job_id, job_manager_registration> job_managers;
  std::size_t idle_releases = 0;

  const task_executor_registration* te_by_instance(const cluster::instance_id& instance) const {
    auto i = by_instance.find(instance);
    if (i == by_instance.end())
      return nullptr;
    auto j = task_executors.find(i->second);
    return j == task_executors.end() ? nullptr : &j->second;
  }

  const job_manager_registration* jm_by_resource(const cluster::resource_id& id) const {
    for (const auto& [job, reg] : job_managers)
      if (reg.resource_id == id)
        return &reg;
    return nullptr;
  }
};

void resource_manager::task_manager_heartbeat_payload(const heartbeat::resource_id& id,
                                                      const heartbeat::payload& data) {
  auto& st = *st_;
  auto i = st.task_executors.find(id);
  if (i == st.task_executors.end() || !st.slots)
    return;
  auto report = decode_slot_report(data);
  if (!report)
    return; // a malformed payload changes nothing; the heartbeat itself still counted
  if (i->second.reported)
    st.slots->report_slot_status(i->second.instance, *report);
  else if (st.slots->register_task_manager(i->second.instance, id, *report))
    i->second.reported = true;
}

// -- endpoint -------------------------------------------------------------------------------------

resource_manager::resource_manager(caf::actor_config& cfg, rpc::endpoint_context ctx,
                                   resource_manager_config config,
                                   resource_manager_services services)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    config_(config),
    services_(services),
    log_(services_.logger ? services_.logger : make_endpoint_logger(endpoint_id())) {}

resource_manager::~resource_manager() = default;

std::string resource_manager::description() const {
  return "ResourceManager " + endpoint_id();
}

void resource_manager::grant_leadership(const rpc::fencing_token& session_id) {
  // Any thread: the embedded election calls from whoever changed the leadership.
  run_async([this, session_id] { accept_leadership(session_id); });
}

void resource_manager::revoke_leadership() {
  run_async([this] {
    log_->info("ResourceManager " + endpoint_id() + " was revoked leadership. Clearing fencing token.");
    set_token({});
    clear_state();
  });
}

const slot_manager* resource_manager::slots() const {
  return st_ && st_->slots ? &*st_->slots : nullptr;
}

std::size_t resource_manager::number_of_task_executors() const {
  return st_ ? st_->task_executors.size() : 0;
}

bool resource_manager::is_registered_task_executor(const cluster::resource_id& id) const {
  return st_ && st_->task_executors.contains(id);
}

bool resource_manager::is_registered_job_manager(const graph::job_id& job) const {
  return st_ && st_->job_managers.contains(job);
}

std::size_t resource_manager::idle_releases() const {
  return st_ ? st_->idle_releases : 0;
}

void resource_manager::on_start() {
  st_ = std::make_unique<state>(*this);
  register_methods();
  // A TaskExecutor whose connection CAF drops is gone now, not at its heartbeat timeout: its
  // slots must not serve the next request.
  set_down_handler([this](caf::down_msg& down) {
    if (!st_)
      return;
    for (const auto& [id, reg] : st_->task_executors)
      if (reg.handle.address() == down.source) {
        auto lost = id;
        close_task_manager_connection(lost, "TaskManager with id " + lost + " is no longer reachable.",
                                      false);
        return;
      }
  });
  auto self = caf::actor_cast<caf::actor>(this);
  if (services_.directory != nullptr)
    services_.directory->put(endpoint_id(), self);
  if (services_.election != nullptr)
    services_.election->start(*this);
}

void resource_manager::on_exit() {
  if (services_.election != nullptr)
    services_.election->stop();
  if (services_.directory != nullptr)
    services_.directory->remove(endpoint_id());
  if (st_)
    clear_state();
  rpc::rpc_endpoint::on_exit();
}

void resource_manager::accept_leadership(const rpc::fencing_token& session_id) {
  if (services_.election != nullptr && !services_.election->has_leadership(session_id))
    return; // revoked again before we got to it
  clear_state();
  set_token(session_id);
  log_->info("ResourceManager " + endpoint_id() + " was granted leadership with fencing token "
             + session_id.to_string());
  auto& st = *st_;
  ++st.epoch;
  st.slots.emplace(slot_manager_config{config_.slot_request_timeout, config_.task_manager_timeout},
                   st.executor, st.slot_actions);
  st.tm_heartbeats.emplace(heartbeat::heartbeat_role::sender, endpoint_id(), config_.heartbeat,
                           st.tm_listener, *this);
  st.jm_heartbeats.emplace(heartbeat::heartbeat_role::sender, endpoint_id(), config_.heartbeat,
                           st.jm_listener, *this);
  if (services_.election != nullptr)
    services_.election->confirm_leadership(
      session_id, leader::leader_address{endpoint_id(), caf::actor_cast<caf::actor>(this), {}, 0});
}

void resource_manager::clear_state() {
  auto& st = *st_;
  ++st.epoch;
  if (st.tm_heartbeats)
    st.tm_heartbeats->stop();
  if (st.jm_heartbeats)
    st.jm_heartbeats->stop();
  st.tm_heartbeats.reset();
  st.jm_heartbeats.reset();
  st.slots.reset();
  st.task_executors.clear();
  st.by_instance.clear();
  st.job_managers.clear();
}

// -- methods --------------------------------------------------------------------------------------

void resource_manager::register_methods() {
  using rpc::fencing;

  handle<register_task_executor>(fencing::fenced, [this](task_executor_registration_request req)
                                                    -> expected<task_executor_registration_response> {
    auto& st = *st_;
    if (!st.slots)
      return make_error(errc::illegal_state, no_leader_text("register TaskExecutors"));
    auto peer = caller();
    if (!peer && services_.directory != nullptr)
      peer = services_.directory->lookup(req.task_executor_address).value_or(caf::actor{});
    if (!peer)
      return task_executor_registration_response{registration::registration_decline{
        "no handle for TaskExecutor " + req.task_executor_address}};
    log_->info("Registering TaskManager with ResourceID " + req.resource_id + " ("
               + req.task_executor_address + ") at ResourceManager");
    if (auto old = st.task_executors.find(req.resource_id); old != st.task_executors.end()) {
      log_->debug("Replacing old registration of TaskExecutor " + req.resource_id + ".");
      // Flink: "Replacing old registration of TaskExecutor": its slots go, the new report
      // brings them back; the TaskExecutor itself is not told.
      (void) st.slots->unregister_task_manager(old->second.instance);
      st.by_instance.erase(old->second.instance);
      st.tm_heartbeats->unmonitor_target(req.resource_id);
      st.task_executors.erase(old);
    }
    cluster::instance_id instance{st.rng(), st.rng()};
    task_executor_registration reg{req.resource_id, instance, req.task_executor_address, peer,
                                   req.data_port, false};
    st.task_executors[req.resource_id] = reg;
    st.by_instance[instance] = req.resource_id;
    monitor(peer);
    rpc::gateway gw(peer, req.task_executor_address, token(), task_executor::rm_scope);
    st.tm_heartbeats->monitor_target(
      req.resource_id,
      heartbeat::make_heartbeat_target<task_executor::heartbeat_from_resource_manager,
                                       task_executor::heartbeat_from_resource_manager>(gw, *this));
    return task_executor_registration_response{task_executor_registration_success{
      instance, endpoint_id(),
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.heartbeat.interval).count()}};
  });

  handle<send_slot_report>(fencing::fenced, [this](send_slot_report_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    auto i = st.task_executors.find(req.resource_id);
    if (i == st.task_executors.end() || i->second.instance != req.registration_id)
      return make_error(errc::not_found, "Unknown TaskManager registration id "
                                           + req.registration_id.to_string() + " of "
                                           + req.resource_id + ".");
    if (i->second.reported)
      st.slots->report_slot_status(req.registration_id, req.report);
    else if (st.slots->register_task_manager(req.registration_id, req.resource_id, req.report))
      i->second.reported = true;
    return rpc::ack{};
  });

  handle<register_job_manager>(fencing::fenced, [this](job_master_registration_request req)
                                                  -> expected<job_master_registration_response> {
    auto& st = *st_;
    if (!st.slots)
      return make_error(errc::illegal_state, no_leader_text("register JobMasters"));
    auto peer = caller();
    if (!peer && services_.directory != nullptr)
      peer = services_.directory->lookup(req.job_master_address).value_or(caf::actor{});
    if (!peer)
      return job_master_registration_response{registration::registration_decline{
        "no handle for JobMaster " + req.job_master_address}};
    log_->info("Registering job manager " + req.job_master_id.to_string() + "@"
               + req.job_master_address + " for job " + req.job_id.to_string() + ".");
    if (auto old = st.job_managers.find(req.job_id); old != st.job_managers.end()) {
      if (old->second.job_master_id != req.job_master_id) {
        close_job_manager_connection(req.job_id,
                                     "JobMaster " + old->second.job_master_id.to_string()
                                       + " of job " + req.job_id.to_string()
                                       + " was replaced by " + req.job_master_id.to_string() + ".",
                                     true);
      } else {
        st.jm_heartbeats->unmonitor_target(old->second.resource_id);
        st.job_managers.erase(old);
      }
    }
    st.job_managers[req.job_id] = job_manager_registration{req.job_id, req.job_master_id,
                                                           req.job_master_resource_id,
                                                           req.job_master_address, peer};
    rpc::gateway gw(peer, req.job_master_address, req.job_master_id);
    st.jm_heartbeats->monitor_target(
      req.job_master_resource_id,
      heartbeat::make_heartbeat_target<job_master::heartbeat_from_resource_manager,
                                       job_master::heartbeat_from_resource_manager>(gw, *this));
    log_->info("Registered job manager " + req.job_master_id.to_string() + "@"
               + req.job_master_address + " for job " + req.job_id.to_string() + ".");
    return job_master_registration_response{job_master_registration_success{token(), endpoint_id()}};
  });

  handle<request_slot>(fencing::fenced, [this](request_slot_request req) -> expected<rpc::ack> {
    auto& st = *st_;
    auto i = st.job_managers.find(req.request.job_id);
    if (i == st.job_managers.end())
      return make_error(errc::not_found, "Could not find registered job manager for job "
                                           + req.request.job_id.to_string() + ".");
    if (i->second.job_master_id != req.job_master_id)
      return make_error(errc::rejected, "The job leader's id " + i->second.job_master_id.to_string()
                                          + " does not match the received id "
                                          + req.job_master_id.to_string() + ".");
    log_->info("Request slot with profile " + req.request.profile.to_string() + " for job "
               + req.request.job_id.to_string() + " with allocation id "
               + req.request.allocation_id.to_string() + ".");
    // A duplicate (a resent request) is acknowledged and ignored.
    if (!st.slots->register_slot_request(req.request))
      log_->debug("Ignoring a duplicate slot request with allocation id "
                  + req.request.allocation_id.to_string() + ".");
    return rpc::ack{};
  });

  handle<cancel_slot_request>(fencing::fenced, [this](cancel_slot_request_request req) -> expected<rpc::ack> {
    st_->slots->unregister_slot_request(req.allocation_id);
    return rpc::ack{};
  });

  handle<notify_slot_available>(fencing::fenced, [this](notify_slot_available_request req)
                                                   -> expected<rpc::ack> {
    auto& st = *st_;
    const auto* reg = st.te_by_instance(req.registration_id);
    if (reg == nullptr || reg->id != req.slot.owner)
      return make_error(errc::not_found, "Unknown TaskManager registration id "
                                           + req.registration_id.to_string() + " for slot "
                                           + req.slot.to_string() + ".");
    st.slots->free_slot(req.slot, req.allocation_id);
    return rpc::ack{};
  });

  handle<heartbeat_from_task_manager>(fencing::fenced, [this](heartbeat::heartbeat_request req)
                                                         -> expected<rpc::ack> {
    if (st_->tm_heartbeats)
      st_->tm_heartbeats->receive_heartbeat(req.origin, std::move(req.data));
    return rpc::ack{};
  });

  handle<heartbeat_from_job_manager>(fencing::fenced, [this](heartbeat::heartbeat_request req)
                                                        -> expected<rpc::ack> {
    if (st_->jm_heartbeats)
      st_->jm_heartbeats->receive_heartbeat(req.origin, std::move(req.data));
    return rpc::ack{};
  });

  handle<disconnect_task_manager>(fencing::fenced, [this](disconnect_task_manager_request req)
                                                     -> expected<rpc::ack> {
    if (!st_->task_executors.contains(req.resource_id))
      return make_error(errc::not_found, "Unknown TaskManager " + req.resource_id + ".");
    close_task_manager_connection(req.resource_id, req.cause, false);
    return rpc::ack{};
  });

  handle<disconnect_job_manager>(fencing::fenced, [this](disconnect_job_manager_request req)
                                                    -> expected<rpc::ack> {
    if (!st_->job_managers.contains(req.job_id))
      return make_error(errc::not_found, "Unknown JobMaster of job " + req.job_id.to_string() + ".");
    close_job_manager_connection(req.job_id, req.cause, false);
    return rpc::ack{};
  });

  handle<request_resource_overview>(fencing::fenced, [this](rpc::ack) -> expected<resource_overview> {
    auto& st = *st_;
    resource_overview out;
    out.number_task_managers = static_cast<std::int32_t>(st.task_executors.size());
    if (st.slots) {
      out.number_registered_slots = static_cast<std::int32_t>(st.slots->number_of_registered_slots());
      out.number_free_slots = static_cast<std::int32_t>(st.slots->number_of_free_slots());
      out.number_pending_slot_requests =
        static_cast<std::int32_t>(st.slots->number_of_pending_requests());
    }
    return out;
  });
}

// -- connections ----------------------------------------------------------------------------------

void resource_manager::close_task_manager_connection(const cluster::resource_id& id,
                                                     const std::string& cause,
                                                     bool notify_task_manager) {
  auto& st = *st_;
  auto i = st.task_executors.find(id);
  if (i == st.task_executors.end())
    return;
  auto reg = i->second;
  log_->info("Closing TaskExecutor connection " + id + " because: " + cause);
  st.task_executors.erase(i);
  st.by_instance.erase(reg.instance);
  if (st.tm_heartbeats)
    st.tm_heartbeats->unmonitor_target(id);
  std::set<graph::job_id> affected;
  if (st.slots) {
    if (auto lost = st.slots->unregister_task_manager(reg.instance)) {
      for (const auto& a : *lost)
        if (a.job)
          affected.insert(*a.job);
    }
  }
  // Each JobMaster that held slots there learns that the TaskExecutor is gone.
  for (const auto& job : affected) {
    auto jm = st.job_managers.find(job);
    if (jm == st.job_managers.end())
      continue;
    rpc::gateway(jm->second.handle, jm->second.address, jm->second.job_master_id)
      .tell<job_master::disconnect_task_manager>(*this, job_master::disconnect_task_manager_request{id, cause});
  }
  if (notify_task_manager)
    rpc::gateway(reg.handle, reg.address, token(), task_executor::rm_scope)
      .tell<task_executor::disconnect_resource_manager>(
        *this, task_executor::disconnect_resource_manager_request{cause});
}

void resource_manager::close_job_manager_connection(const graph::job_id& job,
                                                    const std::string& cause,
                                                    bool notify_job_manager) {
  auto& st = *st_;
  auto i = st.job_managers.find(job);
  if (i == st.job_managers.end())
    return;
  auto reg = i->second;
  log_->info("Disconnect job manager " + reg.job_master_id.to_string() + "@" + reg.address
             + " for job " + job.to_string() + " from the resource manager: " + cause);
  st.job_managers.erase(i);
  if (st.jm_heartbeats)
    st.jm_heartbeats->unmonitor_target(reg.resource_id);
  if (st.slots)
    st.slots->unregister_job(job);
  if (notify_job_manager)
    rpc::gateway(reg.handle, reg.address, reg.job_master_id)
      .tell<job_master::disconnect_resource_manager>(
        *this, job_master::disconnect_resource_manager_request{token(), cause});
}

// -- slot manager actions ---------------------------------------------------------------------------

void resource_manager::allocate_slot(const cluster::instance_id& instance,
                                     const cluster::resource_id& task_manager,
                                     const cluster::slot_id& slot, const slot_request& request) {
  auto& st = *st_;
  auto i = st.task_executors.find(task_manager);
  if (i == st.task_executors.end() || i->second.instance != instance) {
    run_async([this, epoch = st.epoch, allocation = request.allocation_id, slot] {
      if (st_->epoch == epoch && st_->slots)
        st_->slots->complete_allocation(allocation, slot,
                                        make_error(errc::not_found, "TaskExecutor is gone"));
    });
    return;
  }
  task_executor::request_slot_request req{slot,          request.job_id,         request.allocation_id,
                                          request.profile, request.target_address, token()};
  rpc::gateway(i->second.handle, i->second.address, token(), task_executor::rm_scope)
    .ask<task_executor::request_slot>(
      *this, req,
      [this, epoch = st.epoch, allocation = request.allocation_id, slot](expected<rpc::ack> r) {
        if (st_->epoch != epoch || !st_->slots)
          return;
        if (r) {
          st_->slots->complete_allocation(allocation, slot, unit{});
          return;
        }
        auto code = r.error().code;
        if (code == errc::unreachable || code == errc::fencing_token_mismatch) {
          // The TaskExecutor is gone or no longer ours: retrying on it would loop. Dropping it
          // moves the request to another slot (it registers again if it is alive).
          close_task_manager_connection(slot.owner, "TaskExecutor " + slot.owner
                                                      + " refused or missed a slot request: "
                                                      + r.error().to_string(),
                                        true);
          return;
        }
        log_->warn("Slot request with allocation id " + allocation.to_string() + " at slot "
                   + slot.to_string() + " failed, retrying: " + r.error().to_string());
        st_->slots->complete_allocation(allocation, slot, r.error());
      });
}

void resource_manager::notify_allocation_failure(const graph::job_id& job,
                                                 const cluster::allocation_id& allocation,
                                                 const std::string&, const error& cause) {
  auto& st = *st_;
  auto i = st.job_managers.find(job);
  if (i == st.job_managers.end())
    return;
  log_->warn(cause.message);
  // Flink's notifyAllocationFailure: the JobMaster fails the allocation in its SlotPool.
  rpc::gateway(i->second.handle, i->second.address, i->second.job_master_id)
    .tell<job_master::fail_slot>(*this, job_master::fail_slot_request{{}, allocation, cause.message});
}

void resource_manager::release_resource(const cluster::instance_id&,
                                        const cluster::resource_id& task_manager,
                                        const std::string& cause) {
  log_->info("Worker " + task_manager + " could not be stopped (" + cause
             + " A standalone ResourceManager keeps it.)");
  // A standalone ResourceManager cannot stop workers (Flink's StandaloneResourceManager:
  // stopWorker returns false), so an idle TaskExecutor stays registered.
  ++st_->idle_releases;
}

} // namespace flint::resource_manager
