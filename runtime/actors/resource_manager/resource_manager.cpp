#include "runtime/actors/resource_manager/resource_manager.hpp"

#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"

#include "runtime/common/logging.hpp"

#include <functional>
#include <optional>
#include <random>

#include <caf/actor_cast.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actors/heartbeat/endpoint_executor.hpp"
#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_state.hpp"
#include "runtime/actors/resource_manager/slot_manager.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"

namespace flint::resource_manager {

namespace {

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

// -- wiring ---------------------------------------------------------------------------------------

/// The actor's executor, listeners and heartbeat managers (the last exist only while leading).
struct resource_manager::wiring {
  explicit wiring(resource_manager& rm)
    : executor(rm),
      tm_listener(
        "The heartbeat of TaskManager", "TaskManager",
        [&rm](const heartbeat::resource_id& id, const std::string& cause) {
          rm.close_task_manager_connection(id, cause, true);
        },
        [&rm](const heartbeat::resource_id& id, const heartbeat::payload& data) {
          rm.task_manager_heartbeat_payload(id, data);
        }),
      jm_listener("The heartbeat of JobManager", "JobManager",
                  [&rm](const heartbeat::resource_id& id, const std::string& cause) {
                    if (const auto* reg = rm.state_->job_manager_by_resource(id)) {
                      auto job = reg->job; // the registration goes while it is closed
                      rm.close_job_manager_connection(job, cause, true);
                    }
                  }),
      slot_actions(rm) {}

  heartbeat::endpoint_executor executor;
  heartbeat::peer_heartbeat_listener tm_listener;
  heartbeat::peer_heartbeat_listener jm_listener;
  actions slot_actions;
  std::optional<heartbeat::heartbeat_manager> tm_heartbeats;
  std::optional<heartbeat::heartbeat_manager> jm_heartbeats;
};

void resource_manager::task_manager_heartbeat_payload(const heartbeat::resource_id& id,
                                                      const heartbeat::payload& data) {
  if (state_->task_executor(id) == nullptr || !state_->is_leading())
    return;
  auto report = decode_slot_report(data);
  if (!report)
    return; // a malformed payload changes nothing; the heartbeat itself still counted
  state_->heartbeat_slot_report(id, *report);
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
    log_->info("ResourceManager " + endpoint_id()
               + " was revoked leadership. Clearing fencing token.");
    set_token({});
    clear_state();
  });
}

const slot_manager* resource_manager::slots() const {
  return state_ ? state_->slots() : nullptr;
}

std::size_t resource_manager::number_of_task_executors() const {
  return state_ ? state_->number_of_task_executors() : 0;
}

bool resource_manager::is_registered_task_executor(const cluster::resource_id& id) const {
  return state_ && state_->task_executor(id) != nullptr;
}

bool resource_manager::is_registered_job_manager(const graph::job_id& job) const {
  return state_ && state_->job_manager(job) != nullptr;
}

std::size_t resource_manager::idle_releases() const {
  return state_ ? state_->idle_releases() : 0;
}

void resource_manager::on_start() {
  wiring_ = std::make_unique<wiring>(*this);
  // Random per run, as Flink's InstanceID: a restarted ResourceManager must not hand out its
  // predecessor's registration ids, or a stale registration would pass for a current one.
  state_ = std::make_unique<resource_manager_state>(
    std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32)
    ^ std::hash<std::string>{}(endpoint_id()));
  register_methods();
  // A TaskExecutor whose connection CAF drops is gone now, not at its heartbeat timeout: its
  // slots must not serve the next request.
  set_down_handler([this](caf::down_msg& down) {
    if (!state_)
      return;
    if (auto lost = state_->task_executor_of(down.source))
      close_task_manager_connection(
        *lost, "TaskManager with id " + *lost + " is no longer reachable.", false);
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
  if (state_)
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
  auto& w = *wiring_;
  state_->start_leading(
    slot_manager_config{config_.slot_request_timeout, config_.task_manager_timeout}, w.executor,
    w.slot_actions);
  w.tm_heartbeats.emplace(heartbeat::heartbeat_role::sender, endpoint_id(), config_.heartbeat,
                          w.tm_listener, *this);
  w.jm_heartbeats.emplace(heartbeat::heartbeat_role::sender, endpoint_id(), config_.heartbeat,
                          w.jm_listener, *this);
  if (services_.election != nullptr)
    services_.election->confirm_leadership(
      session_id, leader::leader_address{endpoint_id(), caf::actor_cast<caf::actor>(this), {}, 0});
}

void resource_manager::clear_state() {
  auto& w = *wiring_;
  if (w.tm_heartbeats)
    w.tm_heartbeats->stop();
  if (w.jm_heartbeats)
    w.jm_heartbeats->stop();
  w.tm_heartbeats.reset();
  w.jm_heartbeats.reset();
  state_->stop_leading();
}

// -- methods --------------------------------------------------------------------------------------

void resource_manager::register_methods() {
  using rpc::fencing;

  handle<register_task_executor>(
    fencing::fenced,
    [this](
      task_executor_registration_request req) -> expected<task_executor_registration_response> {
      if (!state_->is_leading())
        return make_error(errc::illegal_state, no_leader_text("register TaskExecutors"));
      auto peer = caller();
      if (!peer && services_.directory != nullptr)
        peer = services_.directory->lookup(req.task_executor_address).value_or(caf::actor{});
      if (!peer)
        return task_executor_registration_response{registration::registration_decline{
          "no handle for TaskExecutor " + req.task_executor_address}};
      log_->info("Registering TaskManager with ResourceID " + req.resource_id + " ("
                 + req.task_executor_address + ") at ResourceManager");
      auto registered = state_->register_task_executor(req, peer);
      if (registered.replaced) {
        // Flink: "Replacing old registration of TaskExecutor": its slots go, the new report
        // brings them back; the TaskExecutor itself is not told.
        log_->debug("Replacing old registration of TaskExecutor " + req.resource_id + ".");
        wiring_->tm_heartbeats->unmonitor_target(req.resource_id);
      }
      monitor(peer);
      // The node's REST asks the TaskExecutor for its log files and threads by this handle.
      if (services_.directory != nullptr)
        services_.directory->put(req.task_executor_address, peer);
      rpc::gateway gw(peer, req.task_executor_address, token(), task_executor::rm_scope);
      wiring_->tm_heartbeats->monitor_target(
        req.resource_id,
        heartbeat::make_heartbeat_target<task_executor::heartbeat_from_resource_manager,
                                         task_executor::heartbeat_from_resource_manager>(gw,
                                                                                         *this));
      return task_executor_registration_response{task_executor_registration_success{
        registered.instance, endpoint_id(),
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.heartbeat.interval).count()}};
    });

  handle<send_slot_report>(
    fencing::fenced, [this](send_slot_report_request req) -> expected<rpc::ack> {
      if (auto r = state_->report_slots(req.resource_id, req.registration_id, req.report); !r)
        return r.error();
      return rpc::ack{};
    });

  handle<register_job_manager>(
    fencing::fenced,
    [this](job_master_registration_request req) -> expected<job_master_registration_response> {
      if (!state_->is_leading())
        return make_error(errc::illegal_state, no_leader_text("register JobMasters"));
      auto peer = caller();
      if (!peer && services_.directory != nullptr)
        peer = services_.directory->lookup(req.job_master_address).value_or(caf::actor{});
      if (!peer)
        return job_master_registration_response{
          registration::registration_decline{"no handle for JobMaster " + req.job_master_address}};
      log_->info("Registering job manager " + req.job_master_id.to_string() + "@"
                 + req.job_master_address + " for job " + req.job_id.to_string() + ".");
      auto registered = state_->register_job_manager(job_manager_registration{
        req.job_id, req.job_master_id, req.job_master_resource_id, req.job_master_address, peer});
      if (registered.previous_closed)
        job_manager_connection_closed(*registered.previous,
                                      "JobMaster " + registered.previous->job_master_id.to_string()
                                        + " of job " + req.job_id.to_string() + " was replaced by "
                                        + req.job_master_id.to_string() + ".",
                                      true);
      else if (registered.previous)
        wiring_->jm_heartbeats->unmonitor_target(registered.previous->resource_id);
      rpc::gateway gw(peer, req.job_master_address, req.job_master_id);
      wiring_->jm_heartbeats->monitor_target(
        req.job_master_resource_id,
        heartbeat::make_heartbeat_target<job_master::heartbeat_from_resource_manager,
                                         job_master::heartbeat_from_resource_manager>(gw, *this));
      log_->info("Registered job manager " + req.job_master_id.to_string() + "@"
                 + req.job_master_address + " for job " + req.job_id.to_string() + ".");
      return job_master_registration_response{
        job_master_registration_success{token(), endpoint_id()}};
    });

  handle<request_slot>(fencing::fenced, [this](request_slot_request req) -> expected<rpc::ack> {
    if (auto r = state_->check_slot_request(req.request.job_id, req.job_master_id); !r)
      return r.error();
    log_->info("Request slot with profile " + req.request.profile.to_string() + " for job "
               + req.request.job_id.to_string() + " with allocation id "
               + req.request.allocation_id.to_string() + ".");
    // A duplicate (a resent request) is acknowledged and ignored.
    if (!state_->register_slot_request(req.request)) {
      log_->debug("Ignoring a duplicate slot request with allocation id "
                  + req.request.allocation_id.to_string() + ".");
      return rpc::ack{};
    }
    // Flink's declarative line: the job's requirement as it stands after this request.
    if (const auto* slots = state_->slots())
      log_->info("Received resource requirements from job " + req.request.job_id.to_string()
                 + ": [ResourceRequirement{resourceProfile=" + req.request.profile.to_string()
                 + ", numberOfRequiredSlots="
                 + std::to_string(slots->number_of_required_slots(req.request.job_id)) + "}]");
    return rpc::ack{};
  });

  handle<cancel_slot_request>(fencing::fenced,
                              [this](cancel_slot_request_request req) -> expected<rpc::ack> {
                                state_->cancel_slot_request(req.allocation_id);
                                return rpc::ack{};
                              });

  handle<notify_slot_available>(
    fencing::fenced, [this](notify_slot_available_request req) -> expected<rpc::ack> {
      if (auto r = state_->notify_slot_available(req.registration_id, req.slot, req.allocation_id);
          !r)
        return r.error();
      return rpc::ack{};
    });

  handle<heartbeat_from_task_manager>(
    fencing::fenced, [this](heartbeat::heartbeat_request req) -> expected<rpc::ack> {
      if (wiring_->tm_heartbeats)
        wiring_->tm_heartbeats->receive_heartbeat(req.origin, std::move(req.data));
      return rpc::ack{};
    });

  handle<heartbeat_from_job_manager>(
    fencing::fenced, [this](heartbeat::heartbeat_request req) -> expected<rpc::ack> {
      if (wiring_->jm_heartbeats)
        wiring_->jm_heartbeats->receive_heartbeat(req.origin, std::move(req.data));
      return rpc::ack{};
    });

  handle<disconnect_task_manager>(
    fencing::fenced, [this](disconnect_task_manager_request req) -> expected<rpc::ack> {
      if (state_->task_executor(req.resource_id) == nullptr)
        return make_error(errc::not_found, "Unknown TaskManager " + req.resource_id + ".");
      close_task_manager_connection(req.resource_id, req.cause, false);
      return rpc::ack{};
    });

  handle<disconnect_job_manager>(
    fencing::fenced, [this](disconnect_job_manager_request req) -> expected<rpc::ack> {
      if (state_->job_manager(req.job_id) == nullptr)
        return make_error(errc::not_found,
                          "Unknown JobMaster of job " + req.job_id.to_string() + ".");
      close_job_manager_connection(req.job_id, req.cause, false);
      return rpc::ack{};
    });

  handle<request_resource_overview>(
    fencing::fenced,
    [this](rpc::ack) -> expected<resource_overview> { return state_->overview(); });
}

// -- connections ----------------------------------------------------------------------------------

void resource_manager::close_task_manager_connection(const cluster::resource_id& id,
                                                     const std::string& cause,
                                                     bool notify_task_manager) {
  if (state_->task_executor(id) == nullptr)
    return;
  log_->info("Closing TaskExecutor connection " + id + " because: " + cause);
  if (wiring_->tm_heartbeats)
    wiring_->tm_heartbeats->unmonitor_target(id);
  auto closed = state_->close_task_manager_connection(id);
  // Each JobMaster that held slots there learns that the TaskExecutor is gone.
  for (const auto& jm : closed->job_managers)
    rpc::gateway(jm.handle, jm.address, jm.job_master_id)
      .tell<job_master::disconnect_task_manager>(
        *this, job_master::disconnect_task_manager_request{id, cause});
  if (notify_task_manager)
    rpc::gateway(closed->registration.handle, closed->registration.address, token(),
                 task_executor::rm_scope)
      .tell<task_executor::disconnect_resource_manager>(
        *this, task_executor::disconnect_resource_manager_request{cause});
}

void resource_manager::close_job_manager_connection(const graph::job_id& job,
                                                    const std::string& cause,
                                                    bool notify_job_manager) {
  if (auto closed = state_->close_job_manager_connection(job))
    job_manager_connection_closed(*closed, cause, notify_job_manager);
}

void resource_manager::job_manager_connection_closed(const job_manager_registration& reg,
                                                     const std::string& cause,
                                                     bool notify_job_manager) {
  log_->info("Disconnect job manager " + reg.job_master_id.to_string() + "@" + reg.address
             + " for job " + reg.job.to_string() + " from the resource manager: " + cause);
  if (wiring_->jm_heartbeats)
    wiring_->jm_heartbeats->unmonitor_target(reg.resource_id);
  if (notify_job_manager)
    rpc::gateway(reg.handle, reg.address, reg.job_master_id)
      .tell<job_master::disconnect_resource_manager>(
        *this, job_master::disconnect_resource_manager_request{token(), cause});
}

// -- slot manager actions ---------------------------------------------------------------------------

void resource_manager::allocate_slot(const cluster::instance_id& instance,
                                     const cluster::resource_id& task_manager,
                                     const cluster::slot_id& slot, const slot_request& request) {
  const auto* target = state_->allocation_target(instance, task_manager);
  if (target == nullptr) {
    run_async([this, epoch = state_->epoch(), allocation = request.allocation_id, slot] {
      if (state_->is_current_epoch(epoch))
        state_->complete_allocation(allocation, slot,
                                    make_error(errc::not_found, "TaskExecutor is gone"));
    });
    return;
  }
  task_executor::request_slot_request req{
    slot, request.job_id, request.allocation_id, request.profile, request.target_address, token()};
  rpc::gateway(target->handle, target->address, token(), task_executor::rm_scope)
    .ask<task_executor::request_slot>(
      *this, req,
      [this, epoch = state_->epoch(), allocation = request.allocation_id,
       slot](expected<rpc::ack> r) {
        if (!state_->is_current_epoch(epoch))
          return;
        if (r) {
          state_->complete_allocation(allocation, slot, unit{});
          return;
        }
        auto code = r.error().code;
        if (code == errc::unreachable || code == errc::fencing_token_mismatch) {
          // The TaskExecutor is gone or no longer ours: retrying on it would loop. Dropping it
          // moves the request to another slot (it registers again if it is alive).
          close_task_manager_connection(
            slot.owner,
            "TaskExecutor " + slot.owner
              + " refused or missed a slot request: " + r.error().to_string(),
            true);
          return;
        }
        log_->warn("Slot request with allocation id " + allocation.to_string() + " at slot "
                   + slot.to_string() + " failed, retrying: " + r.error().to_string());
        state_->complete_allocation(allocation, slot, r.error());
      });
}

void resource_manager::notify_allocation_failure(const graph::job_id& job,
                                                 const cluster::allocation_id& allocation,
                                                 const std::string&, const error& cause) {
  const auto* jm = state_->job_manager(job);
  if (jm == nullptr)
    return;
  log_->warn(cause.message);
  // Flink's notifyAllocationFailure: the JobMaster fails the allocation in its SlotPool.
  rpc::gateway(jm->handle, jm->address, jm->job_master_id)
    .tell<job_master::fail_slot>(*this,
                                 job_master::fail_slot_request{{}, allocation, cause.message});
}

void resource_manager::release_resource(const cluster::instance_id&,
                                        const cluster::resource_id& task_manager,
                                        const std::string& cause) {
  log_->info("Worker " + task_manager + " could not be stopped (" + cause
             + " A standalone ResourceManager keeps it.)");
  // A standalone ResourceManager cannot stop workers (Flink's StandaloneResourceManager:
  // stopWorker returns false), so an idle TaskExecutor stays registered.
  state_->count_idle_release();
}

} // namespace flint::resource_manager
