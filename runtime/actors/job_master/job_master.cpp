#include "runtime/actors/job_master/job_master.hpp"

#include "runtime/actors/job_master/failover_settings.hpp"
#include "runtime/ha/checkpoint_id_counter.hpp"
#include "runtime/ha/completed_checkpoint_store.hpp"
#include "runtime/state/checkpoint_storage.hpp"

#include "runtime/common/logging.hpp"

#include <caf/all.hpp>

#include <spdlog/spdlog.h>

#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "runtime/actors/slot_pool/slot_pool.hpp"
#include "runtime/actors/slot_pool/slot_pool_state.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"

namespace flint::job_master {

using graph::job_status;

// -- listeners ----------------------------------------------------------------------------------------

/// Leader retrieval calls from any thread: hop into the main thread first.
class job_master::resource_manager_leader_listener final
  : public leader::leader_retrieval_listener {
public:
  explicit resource_manager_leader_listener(job_master& self)
    : self_(self),
      handle_(self.address()) {}
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token& session_id) override {
    auto handle = caf::actor_cast<caf::actor>(handle_);
    if (!handle)
      return; // the JobMaster is gone
    auto* self = &self_;
    caf::anon_send(handle, rpc::run_atom::value, std::function<void()>([self, address, session_id] {
                     self->notify_resource_manager_leader(address, session_id);
                   }));
  }

private:
  job_master& self_;
  /// Weak: the JobMaster owns this listener, so a strong handle here would keep it alive forever.
  caf::actor_addr handle_;
};

// -- construction ---------------------------------------------------------------------------------

job_master::job_master(caf::actor_config& cfg, rpc::endpoint_context ctx, graph::job_graph job,
                       cluster::job_master_id token, job_master_config config,
                       job_master_services services)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    job_graph_(std::move(job)),
    job_id_(job_graph_.job_id),
    initial_token_(token),
    config_(config),
    services_(std::move(services)),
    logger_(services_.logger ? services_.logger : make_endpoint_logger(endpoint_id())),
    state_(job_id_) {}

job_master::~job_master() = default;

rpc::gateway job_master::slot_pool_gateway() const {
  return rpc::gateway(slot_pool_, slot_pool::endpoint_prefix + job_id_.to_string(), token());
}

void job_master::on_start() {
  // startJobExecution: the fencing token first, so that calls of this leadership are accepted.
  set_token(initial_token_);
  set_down_handler([this](caf::down_msg& down) {
    if (auto id = state_.task_manager_down(down.source))
      disconnect_task_manager(*id, "TaskManager with id " + *id + " is no longer reachable.");
  });
  register_methods();
  if (services_.directory != nullptr)
    services_.directory->put(endpoint_id(), caf::actor_cast<caf::actor>(this));
  if (endpoint_id() != endpoint_prefix + job_id_.to_string())
    logger_->warn("The JobMaster of job " + job_id_.to_string() + " runs as endpoint "
                  + endpoint_id() + "; TaskExecutors expect " + endpoint_prefix
                  + job_id_.to_string() + ".");
  logger_->info("Initializing job " + job_graph_.name + " (" + job_id_.to_string() + ").");
  auto failover = make_failover_settings(config_.configuration, job_graph_);
  if (!failover) {
    fail_before_start("Could not start job " + job_id_.to_string() + ": "
                      + failover.error().message);
    return;
  }
  logger_->info("Using restart back off time strategy " + failover->restart_strategy->description()
                + " for " + job_graph_.name + " (" + job_id_.to_string() + ").");
  failover_ = std::move(*failover);
  start_execution();
}

void job_master::start_execution() {
  // False: failed, or the recovery is tried again later (retry_recovery).
  if (!create_checkpoint_coordinator())
    return;
  auto failover = std::move(failover_);
  auto graph = graph::execution_graph::build(std::move(job_graph_));
  if (!graph) {
    fail_before_start("Could not create the ExecutionGraph of job " + job_id_.to_string() + ": "
                      + graph.error().message);
    return;
  }
  if (auto valid = config_.heartbeat.validate(); !valid) {
    fail_before_start("Invalid heartbeat configuration: " + valid.error().message);
    return;
  }
  epoch_at_start_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
    std::chrono::system_clock::now().time_since_epoch());
  clock_at_start_ = clock().now();
  scheduler_settings settings;
  settings.rpc_timeout = rpc_settings().ask_timeout;
  settings.restart_strategy = std::move(failover.restart_strategy);
  settings.failover_strategy = std::move(failover.failover_strategy);
  settings.clock = [this] {
    return epoch_at_start_
      + std::chrono::duration_cast<std::chrono::nanoseconds>(clock().now() - clock_at_start_);
  };
  state_.set_scheduler(std::make_unique<scheduler>(
    std::move(*graph), std::move(settings), static_cast<scheduler_actions&>(*this), logger_));
  start_job_master_services();
  logger_->info("Starting execution of job '" + state_.job_scheduler()->graph().job_graph().name
                + "' (" + job_id_.to_string() + ") under job master id " + token().to_string()
                + ".");
  reset_and_start_scheduler();
}

void job_master::fail_before_start(const std::string& cause) {
  logger_->error(cause);
  state_.fail_before_start(cause);
  run_async(
    [this] { job_reached_terminal_state(job_status::failed, state_.result()->failure_cause); });
}

void job_master::start_job_master_services() {
  // Heartbeats: we request from TaskExecutors, the ResourceManager requests from us.
  tm_listener_ = std::make_unique<heartbeat::peer_heartbeat_listener>(
    "Heartbeat of TaskManager", "TaskManager",
    [this](const heartbeat::resource_id& id, const std::string& cause) {
      when_leading("the loss of TaskManager " + id,
                   [this, id, cause] { disconnect_task_manager(id, cause); });
    },
    [this](const heartbeat::resource_id& id, const heartbeat::payload& data) {
      // The running tasks' figures (Flink's TaskExecutorToJobManagerHeartbeatPayload).
      auto report = rpc::codec<task_io_report>::decode(data);
      if (!report) {
        logger_->warn("Ignoring an unreadable heartbeat payload of TaskManager " + id + ": "
                      + report.error().message);
        return;
      }
      state_.update_task_io(*report);
      if (report->reports_deployments)
        reconcile_deployments(id, report->deployed_executions);
    });
  rm_listener_ = std::make_unique<heartbeat::peer_heartbeat_listener>(
    "The heartbeat of ResourceManager", "ResourceManager",
    [this](const heartbeat::resource_id&, const std::string& cause) {
      when_leading("the loss of the ResourceManager", [this, cause] {
        logger_->info(cause);
        reconnect_to_resource_manager(cause);
      });
    });
  tm_heartbeats_ = std::make_unique<heartbeat::heartbeat_manager>(
    heartbeat::heartbeat_role::sender, endpoint_id(), config_.heartbeat, *tm_listener_, *this);
  rm_heartbeats_ = std::make_unique<heartbeat::heartbeat_manager>(
    heartbeat::heartbeat_role::receiver, endpoint_id(), config_.heartbeat, *rm_listener_, *this);

  // The SlotPool, under this leadership's token.
  slot_pool::slot_pool_config pool_config;
  pool_config.slot_request_timeout = config_.slot_request_timeout;
  pool_config.slot_idle_timeout = config_.slot_idle_timeout;
  pool_config.rpc_timeout = rpc_settings().ask_timeout;
  pool_config.job_master_address = endpoint_id();
  auto pool_id = slot_pool::endpoint_prefix + job_id_.to_string();
  pool_config.logger =
    std::make_shared<spdlog::logger>(pool_id, logger_->sinks().begin(), logger_->sinks().end());
  pool_config.logger->set_level(logger_->level());
  rpc::endpoint_context pool_ctx{slot_pool::endpoint_prefix + job_id_.to_string(), recorder(),
                                 rpc_settings()};
  slot_pool_ = spawn<slot_pool::slot_pool, caf::linked>(std::move(pool_ctx), job_id_, token(),
                                                        pool_config, services_.directory);
  if (services_.directory != nullptr)
    services_.directory->put(slot_pool::endpoint_prefix + job_id_.to_string(), slot_pool_);

  // ResourceManager leader retrieval: on each leader, register there.
  if (services_.ha != nullptr) {
    rm_leader_listener_ = std::make_unique<resource_manager_leader_listener>(*this);
    rm_retrieval_ = services_.ha->resource_manager_retrieval();
    rm_retrieval_->start(*rm_leader_listener_);
  }
}

void job_master::reset_and_start_scheduler() {
  validate_runs_in_main_thread();
  state_.job_scheduler()->start_scheduling();
}

rpc::fencing_token job_master::expected_token(const rpc::envelope& e) const {
  // Flink's JobMaster has no fencing token once its leadership is revoked; here the leadership
  // is asked at each call, so a JobManager that wakes after its session expired refuses what it
  // dequeued before its revocation arrives.
  if (services_.leads && !services_.leads())
    return {};
  return rpc::rpc_endpoint::expected_token(e);
}

void job_master::when_leading(std::string what, std::function<void()> f) {
  if (!services_.leads || services_.leads()) {
    f();
    return;
  }
  logger_->warn("The JobMaster of job " + job_id_.to_string()
                + " cannot confirm its leadership: it does not act on " + what + " now.");
  schedule_run_async([this, what = std::move(what), f = std::move(f)]() mutable {
    when_leading(std::move(what), std::move(f));
  }, std::chrono::milliseconds(200));
}

void job_master::on_exit() {
  // Flink's JobMaster#onStop: TaskExecutors still serving the job and the ResourceManager learn
  // that this JobMaster is gone, rather than waiting for their heartbeats to time out. After a
  // finished job too: its blocking partitions are released at that disconnect.
  auto cause = "JobMaster for job " + job_id_.to_string() + " is stopping.";
  for (const auto& [id, connection] : state_.task_managers())
    connection.gateway.tell<task_executor::disconnect_job_manager>(
      *this, task_executor::disconnect_job_manager_request{job_id_, cause});
  if (state_.is_connected_to_resource_manager())
    state_.resource_manager()->gateway.tell<resource_manager::disconnect_job_manager>(
      *this, resource_manager::disconnect_job_manager_request{job_id_, cause});
  if (rm_retrieval_)
    rm_retrieval_->stop();
  rm_registration_.reset();
  if (tm_heartbeats_)
    tm_heartbeats_->stop();
  if (rm_heartbeats_)
    rm_heartbeats_->stop();
  if (services_.directory != nullptr) {
    auto self = caf::actor_cast<caf::actor>(this);
    if (services_.directory->lookup(endpoint_id()) == self)
      services_.directory->remove(endpoint_id());
    auto pool_id = slot_pool::endpoint_prefix + job_id_.to_string();
    if (slot_pool_ && services_.directory->lookup(pool_id) == slot_pool_)
      services_.directory->remove(pool_id);
  }
  // Drop every peer handle: TaskExecutors and the ResourceManager hold ours until they hear of
  // the disconnect, and handles held both ways keep both actors from ever being freed.
  state_.drop_peers();
  rm_retrieval_.reset();
  // rm_leader_listener_ stays until the JobMaster is destroyed: the election service may still be
  // notifying it from another thread (it notifies outside its lock).
  tm_heartbeats_.reset();
  rm_heartbeats_.reset();
  slot_pool_ = caf::actor{};
  services_.on_terminal = nullptr;
  rpc::rpc_endpoint::on_exit();
}

// -- methods --------------------------------------------------------------------------------------

void job_master::register_methods() {
  using rpc::fencing;

  handle<register_task_manager>(
    fencing::fenced,
    [this](register_task_manager_request req) -> expected<task_manager_registration_response> {
      const auto& id = req.location.id;
      if (state_.is_registered_task_manager(id))
        return task_manager_registration_response{task_manager_registration_success{endpoint_id()}};
      if (!slot_pool_ || !state_.accepts_task_managers())
        return task_manager_registration_response{registration::registration_decline{
          "The JobMaster of job " + job_id_.to_string() + " is not running."}};
      auto peer = caller();
      if (!peer && services_.directory != nullptr)
        peer = services_.directory->lookup(req.task_executor_address).value_or(caf::actor{});
      if (!peer)
        return task_manager_registration_response{registration::registration_decline{
          "no handle for TaskExecutor " + req.task_executor_address}};
      if (services_.directory != nullptr)
        services_.directory->put(req.task_executor_address, peer);
      rpc::gateway te(peer, req.task_executor_address, token(), job_id_.to_string());
      state_.add_task_manager(
        id, task_manager_connection{req.task_executor_address, req.location, te}, peer.address());
      // A TaskExecutor whose process or link goes away is noticed when CAF drops its connection,
      // not only at the heartbeat timeout (Flink needs heartbeat.timeout; FLINK-23209).
      monitor(peer);
      slot_pool_gateway().ask<slot_pool::register_task_manager>(
        *this, slot_pool::register_task_manager_request{id}, [this, id](expected<rpc::ack> r) {
          if (!r)
            logger_->warn("Could not register TaskManager " + id
                          + " at the SlotPool: " + r.error().to_string());
        });
      tm_heartbeats_->monitor_target(
        id,
        heartbeat::make_heartbeat_target<task_executor::heartbeat_from_job_manager,
                                         task_executor::heartbeat_from_job_manager>(te, *this));
      logger_->info("Registered TaskManager " + id + " (" + req.task_executor_address + ") for job "
                    + job_id_.to_string() + ".");
      return task_manager_registration_response{task_manager_registration_success{endpoint_id()}};
    });

  handle_async<offer_slots>(
    fencing::fenced,
    [this](offer_slots_request req, rpc::reply_to<offer_slots_response> reply) mutable {
      auto tm = state_.known_task_manager(req.task_manager);
      if (!tm) {
        reply(tm.error());
        return;
      }
      slot_pool::offer_slots_request forward{(*tm)->location, (*tm)->address, req.offers};
      slot_pool_gateway().ask<slot_pool::offer_slots>(
        *this, forward,
        [reply](expected<offer_slots_response> accepted) mutable { reply(std::move(accepted)); });
    });

  handle<update_task_execution_state>(
    fencing::fenced, [this](cluster::task_execution_state state) -> expected<rpc::ack> {
      auto* scheduler = state_.job_scheduler();
      if (scheduler == nullptr)
        return make_error(
          errc::illegal_state,
          "The JobMaster of job " + job_id_.to_string() + " has no ExecutionGraph.");
      auto updated = scheduler->update_task_execution_state(state);
      if (!updated)
        return updated.error();
      if (state.state == graph::execution_state::finished && checkpoints_) {
        checkpoints_->task_finished(state.attempt, now_ms());
        checkpoints_->trigger_after_finished_task(now_ms());
      }
      return rpc::ack{};
    });

  handle<cancel>(fencing::fenced, [this](rpc::ack) -> expected<rpc::ack> {
    if (auto* scheduler = state_.job_scheduler())
      scheduler->cancel();
    return rpc::ack{};
  });

  handle<request_job_status>(fencing::fenced, [this](rpc::ack) -> expected<job_status_response> {
    return full_status_report();
  });

  handle<report_task_io>(fencing::fenced, [this](task_io_report req) -> expected<rpc::ack> {
    state_.update_task_io(req);
    return rpc::ack{};
  });

  handle<heartbeat_from_task_manager>(
    fencing::fenced, [this](heartbeat::heartbeat_request req) -> expected<rpc::ack> {
      if (tm_heartbeats_)
        tm_heartbeats_->receive_heartbeat(req.origin, std::move(req.data));
      return rpc::ack{};
    });

  handle<heartbeat_from_resource_manager>(
    fencing::unfenced, [this](heartbeat::heartbeat_request req) -> expected<rpc::ack> {
      if (rm_heartbeats_)
        rm_heartbeats_->request_heartbeat(req.origin, std::move(req.data));
      return rpc::ack{};
    });

  handle<flint::job_master::disconnect_task_manager>(
    fencing::fenced, [this](disconnect_task_manager_request req) -> expected<rpc::ack> {
      disconnect_task_manager(req.resource_id, req.cause);
      return rpc::ack{};
    });

  handle<disconnect_resource_manager>(
    fencing::fenced, [this](disconnect_resource_manager_request req) -> expected<rpc::ack> {
      if (state_.is_resource_manager(req.resource_manager_id))
        reconnect_to_resource_manager(req.cause);
      return rpc::ack{};
    });

  register_checkpoint_methods();

  handle<fail_slot>(fencing::fenced, [this](fail_slot_request req) -> expected<rpc::ack> {
    // An empty TaskManager id is the ResourceManager's notifyAllocationFailure.
    if (!req.task_manager.empty())
      if (auto tm = state_.known_task_manager(req.task_manager); !tm)
        return tm.error();
    if (slot_pool_)
      slot_pool_gateway().tell<slot_pool::fail_allocation>(
        *this, slot_pool::fail_allocation_request{req.allocation_id, req.cause});
    if (auto* scheduler = state_.job_scheduler())
      scheduler->fail_slot(req.allocation_id,
                           "Slot " + req.allocation_id.to_string() + " failed: " + req.cause);
    return rpc::ack{};
  });
}

// -- resource manager -----------------------------------------------------------------------------

void job_master::notify_resource_manager_leader(const leader::leader_address& address,
                                                const cluster::resource_manager_id& id) {
  switch (state_.notify_resource_manager_leader(address, id)) {
    case resource_manager_leader_change::ignore:
    case resource_manager_leader_change::unchanged: return;
    case resource_manager_leader_change::lost:
      close_resource_manager_connection("ResourceManager leader lost.", false);
      return;
    case resource_manager_leader_change::connect: connect_to_resource_manager(address, id); return;
  }
}

void job_master::connect_to_resource_manager(const leader::leader_address& address,
                                             const cluster::resource_manager_id& id) {
  close_resource_manager_connection("New ResourceManager leader found.",
                                    state_.is_connected_to_resource_manager());
  caf::actor handle = address.handle;
  if (!handle && services_.directory != nullptr)
    handle = services_.directory->lookup(address.endpoint_id).value_or(caf::actor{});
  if (!handle) {
    logger_->warn("Cannot connect to ResourceManager " + address.endpoint_id
                  + ": no handle for its address.");
    return;
  }
  // The SlotPool resolves the ResourceManager through the directory. With several JobManager
  // processes the leading ResourceManager may live in another one while this process runs a
  // standby under the same endpoint id, so a leader that is not the directory's entry is filed
  // under a key naming its leader id: the pool must never ask the standby for slots.
  auto pool_key = address.endpoint_id;
  if (services_.directory != nullptr) {
    auto filed = services_.directory->lookup(pool_key);
    if (filed && *filed != handle)
      pool_key = address.endpoint_id + "@" + id.to_string();
    if (!filed || *filed != handle)
      services_.directory->put(pool_key, handle);
  }
  logger_->info("Connecting to ResourceManager " + address.endpoint_id + "(" + id.to_string()
                + ")");
  rpc::gateway gw(handle, address.endpoint_id, id);
  auto generation = state_.begin_resource_manager_connection(gw, id, address.endpoint_id, pool_key);
  resource_manager::job_master_registration_request req{token(), endpoint_id(), endpoint_id(),
                                                        job_id_};
  logger_->info("Resolved ResourceManager address, beginning registration");
  auto attempts = std::make_shared<int>(0);
  rm_registration_ = std::make_unique<
    registration::retrying_registration<resource_manager::job_master_registration_success>>(
    *this, "ResourceManager", config_.registration,
    [this, gw, req, attempts](std::chrono::nanoseconds timeout, auto done) {
      logger_->info(
        "Registration at ResourceManager attempt " + std::to_string(++*attempts) + " (timeout="
        + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count())
        + "ms)");
      gw.ask<resource_manager::register_job_manager>(*this, req, std::move(done), timeout);
    },
    [this, generation](resource_manager::job_master_registration_success success) {
      on_registered_at_resource_manager(generation, success);
    });
  rm_registration_->start();
}

void job_master::on_registered_at_resource_manager(
  std::uint64_t generation, const resource_manager::job_master_registration_success& success) {
  if (!state_.resource_manager_registered(generation, success.resource_manager_resource_id))
    return;
  logger_->info("JobManager successfully registered at ResourceManager, leader id: "
                + success.resource_manager_id.to_string() + ".");
  const auto& rm = *state_.resource_manager();
  rm_heartbeats_->monitor_target(
    rm.resource_id,
    heartbeat::make_heartbeat_target<resource_manager::heartbeat_from_job_manager,
                                     resource_manager::heartbeat_from_job_manager>(rm.gateway,
                                                                                   *this));
  slot_pool_gateway().ask<slot_pool::connect_to_resource_manager>(
    *this, slot_pool::connect_to_resource_manager_request{rm.id, rm.directory_key},
    [this](expected<rpc::ack> r) {
      if (!r)
        logger_->warn("The SlotPool could not connect to the ResourceManager: "
                      + r.error().to_string());
    });
}

void job_master::close_resource_manager_connection(const std::string& cause,
                                                   bool notify_resource_manager) {
  auto closed = state_.close_resource_manager_connection();
  if (!closed)
    return;
  if (rm_registration_)
    rm_registration_->cancel();
  rm_registration_.reset();
  if (closed->established) {
    logger_->info("Close ResourceManager connection " + closed->resource_id + ": " + cause);
    rm_heartbeats_->unmonitor_target(closed->resource_id);
    if (notify_resource_manager)
      closed->gateway.tell<resource_manager::disconnect_job_manager>(
        *this, resource_manager::disconnect_job_manager_request{job_id_, cause});
    slot_pool_gateway().tell<slot_pool::disconnect_resource_manager>(*this, rpc::ack{});
  }
}

void job_master::reconnect_to_resource_manager(const std::string& cause) {
  // As Flink's reconnectToResourceManager: the RM is told to drop us, then we register anew.
  close_resource_manager_connection(cause, true);
  if (auto leader = state_.reconnect_target())
    connect_to_resource_manager(leader->first, leader->second);
}

// -- task executors -------------------------------------------------------------------------------

void job_master::disconnect_task_manager(const cluster::resource_id& id, const std::string& cause) {
  auto removed = state_.remove_task_manager(id);
  if (!removed)
    return;
  if (removed->watched)
    demonitor(*removed->watched);
  logger_->info("Disconnect TaskExecutor " + id + " because: " + cause);
  tm_heartbeats_->unmonitor_target(id);
  slot_pool_gateway().tell<slot_pool::release_task_manager>(
    *this, slot_pool::release_task_manager_request{id, cause, false});
  removed->connection.gateway.tell<task_executor::disconnect_job_manager>(
    *this, task_executor::disconnect_job_manager_request{job_id_, cause});
  if (auto* scheduler = state_.job_scheduler())
    scheduler->fail_task_manager(id, "TaskManager " + id + " disconnected: " + cause);
}

void job_master::reconcile_deployments(const cluster::resource_id& id,
                                       const std::vector<graph::execution_attempt_id>& deployed) {
  auto* scheduler = state_.job_scheduler();
  const auto* tm = state_.task_manager(id);
  if (scheduler == nullptr || tm == nullptr)
    return;
  auto gateway = tm->gateway; // a failure below may disconnect the TaskManager
  auto unknown = scheduler->reconcile_deployments(id, deployed);
  if (unknown.empty())
    return;
  std::string listed;
  for (const auto& attempt : unknown)
    listed += (listed.empty() ? "" : ", ") + attempt.to_string();
  logger_->info("Canceling unknown deployments [" + listed + "] on " + id + ".");
  for (const auto& attempt : unknown)
    gateway.tell<task_executor::cancel_task>(
      *this, task_executor::cancel_task_request{job_id_, attempt});
}

std::optional<rpc::gateway> job_master::task_executor_gateway(
  const slot_pool::allocated_slot& slot) const {
  if (const auto* tm = state_.task_manager(slot.location.id))
    return tm->gateway;
  return std::nullopt;
}

// -- scheduler actions ----------------------------------------------------------------------------

void job_master::allocate_slot(const slot_pool::slot_request_id& request,
                               const cluster::resource_profile& profile) {
  // The pool answers within slot.request.timeout; wait a little longer so its answer wins.
  slot_pool_gateway().ask<slot_pool::allocate_slot>(
    *this, slot_pool::allocate_slot_request{request, profile, true},
    [this, request](expected<slot_pool::allocated_slot> slot) {
      if (auto* scheduler = state_.job_scheduler())
        scheduler->on_slot_allocated(request, std::move(slot));
    },
    config_.slot_request_timeout + rpc_settings().ask_timeout);
}

void job_master::release_slot(const slot_pool::slot_request_id& request, const std::string& cause) {
  slot_pool_gateway().tell<slot_pool::release_slot>(
    *this, slot_pool::release_slot_request{request, cause});
}

void job_master::submit_task(const graph::execution_attempt_id& attempt,
                             const slot_pool::allocated_slot& slot,
                             graph::task_deployment_descriptor tdd) {
  auto te = task_executor_gateway(slot);
  if (!te) {
    run_async([this, attempt, address = slot.task_executor_address] {
      if (auto* scheduler = state_.job_scheduler())
        scheduler->on_submit_result(
          attempt,
          make_error(errc::unreachable, "TaskExecutor " + address + " is not registered."));
    });
    return;
  }
  if (auto restored = add_checkpoint_settings(tdd); !restored) {
    run_async([this, attempt, cause = restored.error()] {
      if (auto* scheduler = state_.job_scheduler())
        scheduler->on_submit_result(
          attempt,
          make_error(cause.code,
                     "Could not restore the state of the task from the latest "
                     "checkpoint: "
                       + cause.message));
    });
    return;
  }
  task_executor::submit_task_request req{std::move(tdd), token(), slot.allocation_id};
  te->ask<task_executor::submit_task>(
    *this, req,
    [this, attempt, allocation = slot.allocation_id, where = slot.location.id](expected<rpc::ack> r) {
      auto* scheduler = state_.job_scheduler();
      if (scheduler == nullptr)
        return;
      if (r) {
        scheduler->on_submit_result(attempt, unit{});
      } else if (r.error().code == errc::not_found) {
        // The TaskExecutor holds no such slot (it freed it, say on a disconnect that crossed its
        // offer): the slot is dead, not only this attempt, or every restart would pick it again
        // (Flink's failSlot from TaskExecutor#syncSlotsWithSnapshotFromJobMaster).
        auto cause = "Slot " + allocation.to_string() + " is not allocated on TaskExecutor "
          + where + ": " + r.error().message;
        slot_pool_gateway().tell<slot_pool::fail_allocation>(
          *this, slot_pool::fail_allocation_request{allocation, cause});
        if (scheduler->fail_slot(allocation, cause) == 0)
          scheduler->on_submit_result(attempt, r.error());
      } else {
        scheduler->on_submit_result(attempt, r.error());
      }
    },
    rpc_settings().ask_timeout);
}

void job_master::cancel_task(const graph::execution_attempt_id& attempt,
                             const slot_pool::allocated_slot& slot) {
  auto te = task_executor_gateway(slot);
  if (!te) {
    run_async([this, attempt] {
      if (auto* scheduler = state_.job_scheduler())
        scheduler->on_cancel_result(
          attempt, make_error(errc::unreachable, "TaskExecutor is not registered."));
    });
    return;
  }
  te->ask<task_executor::cancel_task>(
    *this, task_executor::cancel_task_request{job_id_, attempt},
    [this, attempt](expected<rpc::ack> r) {
      auto* scheduler = state_.job_scheduler();
      if (scheduler == nullptr)
        return;
      if (r)
        scheduler->on_cancel_result(attempt, unit{});
      else
        scheduler->on_cancel_result(attempt, r.error());
    },
    rpc_settings().ask_timeout);
}

void job_master::release_partitions(
  const cluster::resource_id& task_manager,
  std::vector<graph::intermediate_result_partition_id> partitions) {
  const auto* tm = state_.task_manager(task_manager);
  if (tm == nullptr)
    return; // gone: its partitions went with it
  tm->gateway.tell<task_executor::release_partitions>(
    *this, task_executor::release_partitions_request{job_id_, std::move(partitions)});
}

void job_master::schedule_restart(std::chrono::milliseconds delay, std::uint64_t restart) {
  schedule_run_async(
    [this, restart] {
      if (auto* scheduler = state_.job_scheduler())
        scheduler->on_restart_delay_elapsed(restart);
    },
    delay);
}

void job_master::job_status_changed(job_status, job_status to, const std::string& cause) {
  if (!is_globally_terminal(to)) {
    checkpoint_job_status_changed(to);
    return;
  }
  // The end goes to the HA stores (the job's result, its checkpoints removed): a leader's act.
  when_leading("the end of the job", [this, to, cause] {
    checkpoint_job_status_changed(to);
    run_async([this, to, cause] { job_reached_terminal_state(to, cause); });
  });
}

void job_master::job_reached_terminal_state(job_status status, const std::string& cause) {
  if (!state_.reach_terminal_state(status, cause))
    return;
  logger_->info("Job " + job_id_.to_string() + " reached terminal state "
                + std::string(to_string(status)) + ".");
  auto report = [this] {
    if (services_.on_terminal) {
      auto result = *state_.result();
      result.report = full_status_report();
      services_.on_terminal(std::move(result));
    }
  };
  const auto& task_managers = state_.task_managers();
  if (!slot_pool_ || task_managers.empty()) {
    report();
    return;
  }
  // Every slot of the job is freed at its TaskExecutor: the pool sends free_slot for what it holds
  // there before it answers, so whoever stops this JobMaster on the report cannot cut that short.
  auto pending = std::make_shared<std::size_t>(task_managers.size());
  for (const auto& [id, connection] : task_managers)
    slot_pool_gateway().ask<slot_pool::release_task_manager>(
      *this,
      slot_pool::release_task_manager_request{id,
                                              "Job " + job_id_.to_string()
                                                + " reached the terminal state "
                                                + std::string(to_string(status)) + ".",
                                              true},
      [pending, report](expected<rpc::ack>) {
        if (--*pending == 0)
          report();
      });
}

} // namespace flint::job_master
