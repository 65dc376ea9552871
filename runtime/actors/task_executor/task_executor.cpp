#include "runtime/actors/task_executor/task_executor.hpp"

#include "runtime/actors/trace/trace_recorder.hpp"

#include "runtime/metrics/task_io_metrics.hpp"
#include "runtime/actors/heartbeat/peer_heartbeat_listener.hpp"

#include "runtime/common/logging.hpp"
#include "runtime/common/node_files.hpp"

#include <optional>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actors/heartbeat/heartbeat_manager.hpp"
#include "runtime/actors/heartbeat/heartbeat_rpc.hpp"
#include "runtime/actors/job_master/checkpoint_metrics_wire.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/resource_manager/slot_report_payload.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/task_executor/job_leader_service.hpp"
#include "runtime/actors/task_executor/job_table.hpp"
#include "runtime/actors/task_executor/task.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/task_executor/task_executor_state.hpp"
#include "runtime/actors/task_executor/task_slot_table.hpp"

namespace flint::task_executor {

namespace rm = flint::resource_manager;

namespace {

/// Cancels (empty cause) or fails a task: the flag first, then the mail.
void stop_task(const task_record& t, const std::string& cause = {}) {
  t.interrupt->store(true, std::memory_order_relaxed);
  if (cause.empty())
    caf::anon_send(t.handle, task_cancel_atom::value);
  else
    caf::anon_send(t.handle, task_fail_atom::value, cause);
}

using rm_registration = registration::retrying_registration<rm::task_executor_registration_success>;

} // namespace

/// Flink's IOMetrics of one task, from its figures now.
static job_master::task_io task_io_of(const graph::execution_attempt_id& attempt,
                                      metrics::task_io_metrics& io) {
  auto now = metrics::task_io_metrics::clock::now();
  auto per_second = io.time_per_second(now);
  auto totals = io.totals_at(now);
  job_master::task_io t;
  t.attempt = attempt;
  t.records_in = io.records_in.load(std::memory_order_relaxed);
  t.records_out = io.records_out.load(std::memory_order_relaxed);
  t.bytes_in_local = io.bytes_in_local.load(std::memory_order_relaxed);
  t.bytes_in_remote = io.bytes_in_remote.load(std::memory_order_relaxed);
  t.bytes_out = io.bytes_out.load(std::memory_order_relaxed);
  t.buffers_out = io.buffers_out.load(std::memory_order_relaxed);
  t.busy_ms_per_second = per_second.busy_ms;
  t.idle_ms_per_second = per_second.idle_ms;
  t.back_pressured_ms_per_second = per_second.backpressured_ms;
  t.accumulated_busy_ms = totals.busy_ns / 1000000;
  t.accumulated_idle_ms = totals.idle_ns / 1000000;
  t.accumulated_back_pressured_ms = totals.backpressured_ns / 1000000;
  t.input_watermark = io.current_input_watermark.load(std::memory_order_relaxed);
  t.output_watermark = io.current_output_watermark.load(std::memory_order_relaxed);
  t.late_records_dropped = io.late_records_dropped.load(std::memory_order_relaxed);
  t.input_idle = io.input_idle.load(std::memory_order_relaxed);
  t.watermark_held_back_by = io.watermark_holder();
  t.checkpoint_alignment_time = io.alignment_time_nanos(metrics::task_io_metrics::clock::now());
  t.checkpoint_start_delay_nanos = io.checkpoint_start_delay_nanos.load(std::memory_order_relaxed);
  return t;
}

template <class M>
void task_executor::tell_job_master(const graph::job_id& job, const typename M::request& req) {
  if (auto* entry = state_->jobs().get(job); entry != nullptr && entry->connection)
    entry->connection->gateway.tell<M>(*this, req);
}

// -- listeners ------------------------------------------------------------------------------------

class task_executor::rm_leader_listener final : public leader::leader_retrieval_listener {
public:
  explicit rm_leader_listener(task_executor& te) : te_(te) {}
  // Any thread: into the main thread first.
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token& id) override {
    te_.run_async(
      [te = &te_, address, id] { te->notify_of_new_resource_manager_leader(address, id); });
  }

private:
  task_executor& te_;
};

class task_executor::job_leader_events final : public job_leader_listener {
public:
  explicit job_leader_events(task_executor& te) : te_(te) {}
  void job_manager_gained_leadership(
    const graph::job_id& job, const cluster::job_master_id& id,
    const leader::leader_address& address,
    const job_master::task_manager_registration_success& success) override {
    te_.establish_job_manager_connection(job, id, address, success.job_master_resource_id);
  }
  void job_manager_lost_leadership(const graph::job_id& job,
                                   const cluster::job_master_id&) override {
    te_.job_manager_lost(job, "JobManager for job " + job.to_string() + " lost leadership.",
                         "JobManager lost leadership");
  }

private:
  task_executor& te_;
};

// -- wiring ---------------------------------------------------------------------------------------

/// The actor's listeners, heartbeat managers, leader services and registration.
struct task_executor::wiring {
  explicit wiring(task_executor& te)
    : rm_listener(te),
      rm_hb_listener(
        "The heartbeat of ResourceManager", "ResourceManager",
        [&te](const heartbeat::resource_id&, const std::string& cause) {
          te.reconnect_to_resource_manager(cause);
        },
        {},
        [&te](const heartbeat::resource_id&) {
          return rm::encode_slot_report(te.state_->slots().create_slot_report());
        }),
      jm_hb_listener(
        "The heartbeat of JobManager", "JobManager",
        [&te](const heartbeat::resource_id& id, const std::string& cause) {
          if (auto job = te.state_->jobs().job_of_job_master(id)) {
            te.job_manager_lost(*job, cause, cause);
            // Flink: register again; the new connection offers the slots anew.
            if (te.wiring_->job_leaders)
              te.wiring_->job_leaders->reconnect(*job);
          }
        },
        {},
        [&te](const heartbeat::resource_id& id) -> heartbeat::payload {
          // The job's running tasks' figures ride on the heartbeat, as Flink's accumulators do.
          auto job = te.state_->jobs().job_of_job_master(id);
          return job ? te.task_io_payload_of(*job) : heartbeat::payload{};
        }),
      job_events(te) {}

  rm_leader_listener rm_listener;
  heartbeat::peer_heartbeat_listener rm_hb_listener;
  heartbeat::peer_heartbeat_listener jm_hb_listener;
  job_leader_events job_events;
  std::unique_ptr<leader::leader_retrieval_service> rm_retrieval;
  std::optional<heartbeat::heartbeat_manager> rm_heartbeat;
  std::optional<heartbeat::heartbeat_manager> jm_heartbeat;
  std::optional<job_leader_service> job_leaders;
  std::unique_ptr<rm_registration> rm_registration_;
};

void task_executor::job_manager_lost(const graph::job_id& job, const std::string& task_cause,
                                     const std::string& connection_cause) {
  // Flink: fail the job's tasks, keep its slots (inactive).
  state_->orphan_tasks_of(job);
  for (const auto& allocation : state_->slots().allocations_of(job)) {
    fail_tasks_of(allocation, task_cause);
    mark_slot_inactive(allocation);
  }
  close_job_manager_connection(job, connection_cause, false);
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
  return state_->slots();
}

const job_table& task_executor::jobs() const {
  return state_->jobs();
}

bool task_executor::is_connected_to_resource_manager() const {
  return state_ && state_->is_connected_to_resource_manager();
}

cluster::resource_manager_id task_executor::resource_manager_id() const {
  return state_ ? state_->resource_manager_id() : cluster::resource_manager_id{};
}

std::size_t task_executor::number_of_running_tasks() const {
  return state_ ? state_->tasks().size() : 0;
}

caf::actor task_executor::task_of(const graph::execution_attempt_id& attempt) const {
  const auto* t = state_ ? state_->task(attempt) : nullptr;
  return t == nullptr ? caf::actor{} : t->handle;
}

bool task_executor::is_orphaned(const graph::execution_attempt_id& attempt) const {
  const auto* t = state_ ? state_->task(attempt) : nullptr;
  return t != nullptr && t->orphaned;
}

rpc::fencing_token task_executor::expected_token(const rpc::envelope& e) const {
  if (!state_)
    return {};
  auto token = state_->expected_token(e.fencing_scope);
  // Calls about a job come from the leader that leader retrieval names now, never from a
  // deposed JobMaster: a connection's JobMasterId that retrieval no longer names serves nothing.
  if (!token.is_nil() && wiring_ && wiring_->job_leaders)
    if (auto job = graph::job_id::from_string(e.fencing_scope);
        job && wiring_->job_leaders->contains_job(*job)
        && wiring_->job_leaders->leader_id_of(*job) != token)
      return {};
  return token;
}

void task_executor::on_start() {
  state_ =
    std::make_unique<task_executor_state>(config_.resource_id, config_.number_of_slots,
                                          config_.default_slot_profile, services_.holds_partitions);
  wiring_ = std::make_unique<wiring>(*this);
  auto& w = *wiring_;
  w.rm_heartbeat.emplace(heartbeat::heartbeat_role::receiver, config_.resource_id,
                         config_.heartbeat, w.rm_hb_listener, *this);
  w.jm_heartbeat.emplace(heartbeat::heartbeat_role::receiver, config_.resource_id,
                         config_.heartbeat, w.jm_hb_listener, *this);
  register_methods();
  if (services_.directory != nullptr)
    services_.directory->put(endpoint_id(), caf::actor_cast<caf::actor>(this));
  if (services_.ha != nullptr) {
    job_master::register_task_manager_request registration{
      endpoint_id(),
      cluster::task_manager_location{config_.resource_id, config_.host, config_.data_port}};
    auto* directory = services_.directory;
    w.job_leaders.emplace(*this, *services_.ha, config_.registration, std::move(registration),
                          w.job_events,
                          [directory](const std::string& id) -> std::optional<caf::actor> {
                            if (directory == nullptr)
                              return std::nullopt;
                            return directory->lookup(id);
                          });
    w.rm_retrieval = services_.ha->resource_manager_retrieval();
    w.rm_retrieval->start(w.rm_listener);
  }
}

void task_executor::on_exit() {
  if (wiring_) {
    auto& w = *wiring_;
    auto& st = *state_;
    // Flink's TaskExecutor.onStop: tell the JobMasters and the ResourceManager at once, so they
    // fail the tasks and drop the slots now rather than when the heartbeats time out.
    const std::string cause = "The TaskExecutor is shutting down.";
    for (const auto& connection : st.job_manager_connections())
      connection.gateway.tell<job_master::disconnect_task_manager>(
        *this, job_master::disconnect_task_manager_request{config_.resource_id, cause});
    if (st.is_connected_to_resource_manager())
      close_resource_manager_connection(cause);
    if (w.rm_retrieval)
      w.rm_retrieval->stop();
    if (w.rm_registration_)
      w.rm_registration_->cancel();
    if (w.job_leaders)
      w.job_leaders->stop();
    if (w.rm_heartbeat)
      w.rm_heartbeat->stop();
    if (w.jm_heartbeat)
      w.jm_heartbeat->stop();
    for (const auto& [attempt, t] : st.tasks())
      caf::anon_send_exit(t.handle, caf::exit_reason::user_shutdown);
    st.clear_tasks();
    task_io_.clear();
    // Drop every peer handle (JobMasters, the ResourceManager, heartbeat targets): they hold
    // ours too, and handles held both ways keep both actors from ever being freed.
    w.job_leaders.reset();
    st.drop_peers();
    w.rm_heartbeat.reset();
    w.jm_heartbeat.reset();
    w.rm_registration_.reset();
    w.rm_retrieval.reset();
  }
  if (services_.directory != nullptr)
    services_.directory->remove(endpoint_id());
  rpc::rpc_endpoint::on_exit();
}

// -- methods --------------------------------------------------------------------------------------

void task_executor::register_methods() {
  using rpc::fencing;

  handle<request_slot>(fencing::fenced, [this](request_slot_request req) -> expected<rpc::ack> {
    log_->info("Receive slot request " + req.allocation_id.to_string() + " for job "
               + req.job_id.to_string() + " from resource manager with leader id "
               + req.resource_manager_id.to_string() + ".");
    auto reserved = state_->request_slot(req);
    if (!reserved)
      return reserved.error();
    log_->info("Allocated slot for " + req.allocation_id.to_string() + ".");
    if (reserved->awaits_acceptance)
      register_slot_timeout(req.allocation_id);
    auto& job_leaders = wiring_->job_leaders;
    if (job_leaders && !job_leaders->contains_job(req.job_id)) {
      log_->info("Add job " + req.job_id.to_string() + " for job leader monitoring.");
      job_leaders->add_job(req.job_id);
    }
    if (reserved->job_manager_connected)
      offer_slots_to_job_manager(req.job_id);
    return rpc::ack{};
  });

  handle<submit_task>(fencing::fenced, [this](submit_task_request req) -> expected<rpc::ack> {
    const auto& tdd = req.tdd;
    auto attempt = task::attempt_of(tdd);
    if (auto r = state_->accept_task(tdd.job_id, req.job_master_id, req.allocation_id, attempt); !r)
      return r.error();
    log_->info("Received task " + tdd.task_name + " (" + attempt.to_string()
               + "), deploy into slot with allocation id " + req.allocation_id.to_string() + ".");
    auto te_addr = address();
    auto* self = this;
    auto interrupt = std::make_shared<std::atomic<bool>>(false);
    task_setup setup{tdd, req.allocation_id, services_.invokables,
                     [te_addr, self](const cluster::task_execution_state& s) {
                       // The closure runs only if the TaskExecutor still lives: in its thread.
                       if (auto te = caf::actor_cast<caf::actor>(te_addr))
                         caf::anon_send(te, rpc::run_atom::value, std::function<void()>([self, s] {
                                          self->on_task_state(s);
                                        }));
                     },
                     interrupt};
    // The task's checkpoint responses go to its job's JobMaster from the main thread.
    auto respond = [te_addr, self](std::function<void()> f) {
      if (auto te = caf::actor_cast<caf::actor>(te_addr))
        caf::anon_send(te, rpc::run_atom::value, std::move(f));
    };
    setup.acknowledge_checkpoint = [respond, self, job = tdd.job_id, attempt](
                                     std::int64_t checkpoint_id, state::task_state_snapshot state,
                                     const state::checkpoint_metrics& m) {
      auto shared = std::make_shared<state::task_state_snapshot>(std::move(state));
      auto wire = job_master::to_wire(m);
      respond([self, job, attempt, checkpoint_id, shared, wire] {
        if (self->is_orphaned(attempt))
          return;
        self->tell_job_master<job_master::acknowledge_checkpoint>(
          job, job_master::acknowledge_checkpoint_request{job, attempt, checkpoint_id,
                                                          std::move(*shared), wire});
      });
    };
    setup.decline_checkpoint = [respond, self, job = tdd.job_id, attempt](
                                 std::int64_t checkpoint_id, const std::string& cause,
                                 bool task_not_ready) {
      respond([self, job, attempt, checkpoint_id, cause, task_not_ready] {
        if (self->is_orphaned(attempt))
          return;
        self->tell_job_master<job_master::decline_checkpoint>(
          job,
          job_master::decline_checkpoint_request{job, attempt, checkpoint_id, cause,
                                                 task_not_ready});
      });
    };
    if (auto* recorder = this->recorder()) {
      // Data-plane events (an input going idle, the channel holding a watermark back) beside the
      // RPC traffic: "task/<job id>/<task>" so a job's trace view finds them.
      setup.trace = [recorder, te = endpoint_id(),
                     task = "task/" + tdd.job_id.to_string() + "/" + tdd.task_name](
                      const std::string& what, const std::string& detail) {
        trace::record r;
        r.time_us = recorder->now_us();
        r.dir = trace::direction::receive;
        r.from = task;
        r.to = te;
        r.method = what;
        r.detail = detail;
        recorder->record_event(std::move(r));
      };
    }
    if (services_.metrics) {
      setup.io = std::make_shared<metrics::task_io_metrics>();
      metrics::task_scope scope{config_.host,
                                config_.resource_id,
                                tdd.job_id.to_string(),
                                tdd.job_name.empty() ? tdd.job_id.to_string() : tdd.job_name,
                                tdd.job_vertex_id.to_string(),
                                attempt.to_string(),
                                tdd.task_name,
                                tdd.attempt_number,
                                tdd.subtask_index};
      task_metrics_[attempt] = services_.metrics->add(metrics::task_collector(scope, setup.io));
      task_io_[attempt] = task_io_entry{tdd.job_id, setup.io};
    }
    auto handle = config_.detached_tasks
      ? home_system().spawn<task, caf::detached>(std::move(setup))
      : home_system().spawn<task>(std::move(setup));
    state_->add_task(attempt,
                     task_record{handle, tdd.task_name, tdd.job_id, req.allocation_id,
                                 graph::execution_state::created, interrupt});
    return rpc::ack{};
  });

  handle<cancel_task>(fencing::fenced, [this](cancel_task_request req) -> expected<rpc::ack> {
    auto t = state_->task_of_job(req.job_id, req.attempt);
    if (!t)
      return t.error();
    log_->info("Attempting to cancel task " + (*t)->name + " (" + req.attempt.to_string() + ").");
    stop_task(**t);
    return rpc::ack{};
  });

  handle<trigger_checkpoint>(
    fencing::fenced, [this](trigger_checkpoint_request req) -> expected<rpc::ack> {
      auto t = state_->task_of_job(req.job_id, req.attempt);
      if (!t)
        return t.error();
      send((*t)->handle, task_checkpoint_atom::value, req.checkpoint_id, req.timestamp, req.stop,
           req.drain);
      return rpc::ack{};
    });
  // A task that ended meanwhile has nothing to be told: no error.
  auto notify = [this](const checkpoint_notification& n, bool completed) {
    if (auto t = state_->task_of_job(n.job_id, n.attempt))
      send((*t)->handle, task_checkpoint_done_atom::value, n.checkpoint_id, completed);
    return rpc::ack{};
  };
  handle<confirm_checkpoint>(
    fencing::fenced,
    [notify](checkpoint_notification n) -> expected<rpc::ack> { return notify(n, true); });
  handle<abort_checkpoint>(
    fencing::fenced,
    [notify](checkpoint_notification n) -> expected<rpc::ack> { return notify(n, false); });

  handle<free_slot>(fencing::fenced, [this](free_slot_request req) -> expected<rpc::ack> {
    if (auto r = state_->check_free_slot(req.job_id, req.allocation_id); !r)
      return r.error();
    free_slot_internal(req.allocation_id, req.cause);
    return rpc::ack{};
  });

  handle<heartbeat_from_resource_manager>(
    fencing::fenced, heartbeat::serve_request_heartbeat(*wiring_->rm_heartbeat));
  handle<heartbeat_from_job_manager>(fencing::fenced,
                                     heartbeat::serve_request_heartbeat(*wiring_->jm_heartbeat));

  handle<disconnect_job_manager>(
    fencing::fenced, [this](disconnect_job_manager_request req) -> expected<rpc::ack> {
      // The JobMaster is gone: stop following it, fail its tasks, free its slots.
      close_job_manager_connection(req.job_id, req.cause, false);
      if (wiring_->job_leaders)
        wiring_->job_leaders->remove_job(req.job_id);
      for (const auto& allocation : state_->slots().allocations_of(req.job_id))
        free_slot_internal(allocation, req.cause);
      state_->remove_job_if_no_slots(req.job_id);
      release_partitions_of(req.job_id);
      return rpc::ack{};
    });

  handle<release_partitions>(
    fencing::fenced, [this](release_partitions_request req) -> expected<rpc::ack> {
      if (services_.release_partitions) {
        log_->info("Releasing " + std::to_string(req.partitions.size())
                   + " result partition(s) of job " + req.job_id.to_string()
                   + ": their consumers are done.");
        services_.release_partitions(req.job_id, req.partitions);
      }
      close_job_manager_connection_if_no_allocated_resources(req.job_id);
      return rpc::ack{};
    });

  handle<request_slot_report>(fencing::fenced, [this](rpc::ack) -> expected<slot_report_response> {
    return slot_report_response{config_.resource_id, state_->slots().create_slot_report()};
  });
  handle<disconnect_resource_manager>(
    fencing::fenced, [this](disconnect_resource_manager_request req) -> expected<rpc::ack> {
      reconnect_to_resource_manager(req.cause);
      return rpc::ack{};
    });
  register_file_methods();
}

// -- the TaskManager's own files and threads --------------------------------------------------------

namespace {

expected<file_chunk> chunk_of(const std::filesystem::path& file, std::int64_t offset,
                              std::int64_t max_bytes, std::size_t max_frame_size) {
  auto read = node_files::read_file_chunk(file, offset,
                                          std::min(max_bytes, file_chunk_bytes_for(max_frame_size)));
  if (!read)
    return read.error();
  return file_chunk{file.filename().string(), read->size, offset, std::move(read->data)};
}

} // namespace

void task_executor::register_file_methods() {
  using rpc::fencing;
  const auto log_dir = config_.log_file.parent_path();
  handle<request_log_list>(fencing::fenced, [log_dir](rpc::ack) -> expected<log_list_response> {
    log_list_response r;
    for (auto& f : node_files::list_log_files(log_dir))
      r.logs.push_back(log_info{std::move(f.name), f.size, f.mtime});
    return r;
  });
  handle<request_file_upload_by_name>(
    fencing::fenced,
    [this, log_dir](file_upload_by_name_request req) -> expected<file_chunk> {
      if (!node_files::is_plain_file_name(req.name))
        return make_error(errc::invalid_argument,
                          "'" + req.name
                            + "' is not the name of a file in the TaskManager's log directory.");
      auto file = node_files::file_in(log_dir, req.name);
      if (!file)
        return make_error(errc::not_found, "The file " + req.name
                                             + " does not exist on the TaskExecutor "
                                             + config_.resource_id + ".");
      return chunk_of(*file, req.offset, req.max_bytes, rpc_settings().max_frame_size);
    });
  handle<request_file_upload_by_type>(
    fencing::fenced, [this](file_upload_by_type_request req) -> expected<file_chunk> {
      std::filesystem::path file;
      if (req.file_type == "LOG")
        file = config_.log_file;
      else if (req.file_type == "STDOUT")
        file = node_files::stdout_file_of(config_.log_file);
      else
        return make_error(errc::invalid_argument,
                          "Unknown file type '" + req.file_type + "': LOG or STDOUT.");
      std::error_code ec;
      if (file.empty() || !std::filesystem::is_regular_file(file, ec))
        return make_error(errc::not_found, "The file " + req.file_type
                                             + " does not exist on the TaskExecutor "
                                             + config_.resource_id + ".");
      return chunk_of(file, req.offset, req.max_bytes, rpc_settings().max_frame_size);
    });
  handle<request_thread_dump>(fencing::fenced, [](rpc::ack) -> expected<thread_dump_response> {
    thread_dump_response r;
    for (auto& t : node_files::thread_dump())
      r.thread_infos.push_back(
        thread_info{std::move(t.thread_name), std::move(t.stringified_thread_info)});
    return r;
  });
}

// -- ResourceManager connection ---------------------------------------------------------------------

void task_executor::notify_of_new_resource_manager_leader(const leader::leader_address& address,
                                                          const rpc::fencing_token& id) {
  if (state_->is_current_resource_manager_leader(address, id))
    return;
  close_resource_manager_connection(
    "ResourceManager leader changed to new address "
    + (address.endpoint_id.empty() ? std::string("<none>") : address.endpoint_id) + ".");
  state_->set_resource_manager_leader(address, id);
  if (state_->has_resource_manager_leader())
    connect_to_resource_manager();
}

void task_executor::connect_to_resource_manager() {
  auto epoch = state_->begin_resource_manager_registration();
  auto address = state_->resource_manager_address();
  auto id = state_->resource_manager_leader_id();
  auto peer = address.handle;
  if (!peer && services_.directory != nullptr)
    peer = services_.directory->lookup(address.endpoint_id).value_or(caf::actor{});
  rm::task_executor_registration_request req{
    endpoint_id(), config_.resource_id,          config_.data_port,
    config_.host,  config_.default_slot_profile, config_.number_of_slots};
  log_->info("Connecting to ResourceManager " + address.endpoint_id + "(" + id.to_string() + ").");
  wiring_->rm_registration_ = std::make_unique<rm_registration>(
    *this, "ResourceManager " + address.endpoint_id, config_.registration,
    [this, peer, address, id, req](std::chrono::nanoseconds timeout,
                                   rm_registration::done_fn done) {
      if (!peer) {
        done(make_error(errc::unreachable, "no handle for ResourceManager " + address.endpoint_id));
        return;
      }
      rpc::gateway(peer, address.endpoint_id, id)
        .ask<rm::register_task_executor>(*this, req, std::move(done), timeout);
    },
    [this, epoch, peer, address, id](rm::task_executor_registration_success success) {
      auto& st = *state_;
      if (!st.resource_manager_registered(
            epoch,
            resource_manager_connection{success.registration_id,
                                        success.resource_manager_resource_id,
                                        rpc::gateway(peer, address.endpoint_id, id)}))
        return;
      log_->info("Successful registration at resource manager " + address.endpoint_id
                 + " under registration id " + success.registration_id.to_string() + ".");
      const auto& rm_connection = *st.resource_manager();
      wiring_->rm_heartbeat->monitor_target(
        rm_connection.resource_manager_resource_id,
        heartbeat::make_heartbeat_target<rm::heartbeat_from_task_manager,
                                         rm::heartbeat_from_task_manager>(rm_connection.gateway,
                                                                          *this));
      rm_connection.gateway.ask<rm::send_slot_report>(
        *this,
        rm::send_slot_report_request{config_.resource_id, rm_connection.registration_id,
                                     st.slots().create_slot_report()},
        [this, epoch](expected<rpc::ack> r) {
          if (!r && state_->is_current_resource_manager_epoch(epoch))
            reconnect_to_resource_manager("Failed to send initial slot report to ResourceManager: "
                                          + r.error().to_string());
        });
    });
  wiring_->rm_registration_->start();
}

void task_executor::close_resource_manager_connection(const std::string& cause) {
  auto closed = state_->close_resource_manager_connection();
  if (wiring_->rm_registration_)
    wiring_->rm_registration_->cancel();
  wiring_->rm_registration_.reset();
  if (closed) {
    log_->info("Close ResourceManager connection " + closed->resource_manager_resource_id + ": "
               + cause);
    wiring_->rm_heartbeat->unmonitor_target(closed->resource_manager_resource_id);
    closed->gateway.tell<rm::disconnect_task_manager>(
      *this, rm::disconnect_task_manager_request{config_.resource_id, cause});
  }
}

void task_executor::reconnect_to_resource_manager(const std::string& cause) {
  close_resource_manager_connection(cause);
  if (state_->has_resource_manager_leader())
    connect_to_resource_manager();
}

// -- JobMaster connections ------------------------------------------------------------------------

void task_executor::establish_job_manager_connection(
  const graph::job_id& job, const cluster::job_master_id& id, const leader::leader_address& address,
  const cluster::resource_id& job_master_resource_id) {
  switch (state_->job_manager_gained_leadership(job, id)) {
    case job_manager_connection_change::unknown_job: // its slots were freed meanwhile
    case job_manager_connection_change::unchanged: return;
    case job_manager_connection_change::replace:
      close_job_manager_connection(job, "JobManager leader changed", false);
      break;
    case job_manager_connection_change::connect: break;
  }
  auto peer = address.handle;
  if (!peer && services_.directory != nullptr)
    peer = services_.directory->lookup(address.endpoint_id).value_or(caf::actor{});
  log_->info("Successful registration at job manager " + address.endpoint_id + " for job "
             + job.to_string() + ".");
  log_->info("Establish JobManager connection for job " + job.to_string() + ".");
  rpc::gateway gw(peer, address.endpoint_id, id);
  state_->jobs().connect(job, job_master_connection{id, job_master_resource_id, gw});
  wiring_->jm_heartbeat->monitor_target(
    job_master_resource_id,
    heartbeat::make_heartbeat_target<job_master::heartbeat_from_task_manager,
                                     job_master::heartbeat_from_task_manager>(gw, *this));
  offer_slots_to_job_manager(job);
}

void task_executor::close_job_manager_connection(const graph::job_id& job, const std::string& cause,
                                                 bool release_job) {
  if (auto conn = state_->jobs().disconnect(job)) {
    log_->info("Close JobManager connection for job " + job.to_string() + ": " + cause);
    wiring_->jm_heartbeat->unmonitor_target(conn->job_master_resource_id);
  }
  if (release_job) {
    state_->jobs().remove(job);
    if (wiring_->job_leaders)
      wiring_->job_leaders->remove_job(job);
    release_partitions_of(job);
  }
}

void task_executor::release_partitions_of(const graph::job_id& job) {
  if (services_.release_job_partitions && state_->holds_partitions_of(job)) {
    log_->info("Releasing the result partitions of job " + job.to_string() + ".");
    services_.release_job_partitions(job);
  }
}

void task_executor::offer_slots_to_job_manager(const graph::job_id& job) {
  auto* entry = state_->jobs().get(job);
  if (entry == nullptr || !entry->connection)
    return;
  auto offers = state_->slots().offers_for(job);
  if (offers.empty())
    return;
  if (state_->has_orphaned_tasks(job)) {
    // Tasks of a closed connection are still ending here, and their partitions with them: a
    // JobMaster given the slots now would deploy beside them, and its consumers could bind to a
    // dying producer's partition of the same id. The offer goes when the last of them ended.
    log_->info("Offering the slots of job " + job.to_string()
               + " once its tasks of the closed JobManager connection have ended.");
    offers_waiting_for_orphans_.insert(job);
    return;
  }
  auto id = entry->connection->job_master_id;
  log_->info("Offer reserved slots to the leader of job " + job.to_string() + ".");
  entry->connection->gateway.ask<job_master::offer_slots>(
    *this, job_master::offer_slots_request{config_.resource_id, offers},
    [this, job, id, offers](expected<job_master::offer_slots_response> r) {
      if (!state_->is_connected_to(job, id))
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
      for (const auto& o : state_->accept_offers(job, offers, r->accepted))
        free_slot_internal(o.allocation,
                           "The slot " + std::to_string(o.slot_index)
                             + " was rejected by the JobMaster of job " + job.to_string() + ".");
    });
}

// -- slots and tasks ------------------------------------------------------------------------------

void task_executor::fail_tasks_of(const cluster::allocation_id& allocation,
                                  const std::string& cause) {
  for (const auto* t : state_->tasks_of(allocation))
    stop_task(*t, cause);
}

void task_executor::free_slot_internal(const cluster::allocation_id& allocation,
                                       const std::string& cause) {
  if (state_->slots().slot_of(allocation) == nullptr)
    return;
  log_->info("Free slot with allocation id " + allocation.to_string() + " because: " + cause);
  fail_tasks_of(allocation, cause);
  if (auto freed = state_->free_slot(allocation))
    after_slot_freed(*freed);
  // Otherwise the slot is RELEASING until its tasks report their final state.
}

void task_executor::register_slot_timeout(const cluster::allocation_id& allocation) {
  schedule_run_async(
    [this, allocation, ticket = state_->arm_slot_timeout(allocation)] {
      if (state_->slot_timeout_elapsed(allocation, ticket))
        free_slot_internal(allocation, "The slot " + allocation.to_string() + " has timed out.");
    },
    config_.slot_timeout);
}

void task_executor::mark_slot_inactive(const cluster::allocation_id& allocation) {
  // Inactive slots wait for a JobMaster to accept them again, for `slot_timeout` at most.
  if (state_->mark_slot_inactive(allocation))
    register_slot_timeout(allocation);
}

void task_executor::after_slot_freed(const freed_slot& slot) {
  if (const auto* rm_connection = state_->resource_manager())
    rm_connection->gateway.tell<rm::notify_slot_available>(
      *this,
      rm::notify_slot_available_request{rm_connection->registration_id,
                                        cluster::slot_id{config_.resource_id, slot.index},
                                        slot.allocation});
  close_job_manager_connection_if_no_allocated_resources(slot.job);
}

void task_executor::close_job_manager_connection_if_no_allocated_resources(
  const graph::job_id& job) {
  if (state_->has_allocated_resources(job))
    return;
  close_job_manager_connection(job,
                               "TaskExecutor " + config_.resource_id
                                 + " has no more allocated slots or partitions for job "
                                 + job.to_string() + ".",
                               true);
}

void task_executor::on_task_state(const cluster::task_execution_state& s) {
  const auto* t = state_->task(s.attempt);
  if (t == nullptr)
    return;
  auto from = *state_->switch_task_state(s.attempt, s.state);
  log_->info(t->name + " (" + s.attempt.to_string() + ") switched from "
             + std::string(graph::to_string(from)) + " to " + std::string(graph::to_string(s.state))
             + "." + (s.failure_cause.empty() ? std::string() : " Cause: " + s.failure_cause));
  // A task whose JobMaster connection closed while it ran reports to nobody: the JobMaster of a
  // later connection does not know it (and may number its own executions alike).
  const bool orphaned = t->orphaned;
  // The last figures of an ended task go first: the JobMaster has them before the final state.
  if (auto i = task_io_.find(s.attempt); i != task_io_.end() && graph::is_terminal(s.state)) {
    job_master::task_io_report final_report{{task_io_of(s.attempt, *i->second.io)}, true};
    task_io_.erase(i);
    if (!orphaned)
      tell_job_master<job_master::report_task_io>(s.job, final_report);
  }
  if (auto* entry = state_->jobs().get(s.job); !orphaned && entry != nullptr && entry->connection)
    entry->connection->gateway.ask<job_master::update_task_execution_state>(
      *this, s, [this, attempt = s.attempt](expected<rpc::ack> r) {
        // Flink's TaskManagerActions#updateTaskExecutionState: a task the JobMaster does not know
        // (an attempt older than its current one, after a restart) must not run on beside it.
        if (r || r.error().code != errc::not_found)
          return;
        if (const auto* t = state_->task(attempt)) {
          log_->info("Failing task " + t->name + " (" + attempt.to_string()
                     + ") because the JobMaster refused its state update: " + r.error().message);
          stop_task(*t, r.error().message);
        }
      });
  if (!graph::is_terminal(s.state))
    return;
  // Flink closes an ended task's metric group: its series leave the TaskManager's /metrics.
  task_metrics_.erase(s.attempt);
  if (auto freed = state_->remove_task(s.attempt))
    after_slot_freed(*freed);
  if (offers_waiting_for_orphans_.count(s.job) != 0 && !state_->has_orphaned_tasks(s.job)) {
    offers_waiting_for_orphans_.erase(s.job);
    offer_slots_to_job_manager(s.job);
  }
}

std::vector<char> task_executor::task_io_payload_of(const graph::job_id& job) const {
  job_master::task_io_report report;
  for (const auto& [attempt, entry] : task_io_)
    if (entry.job == job)
      report.tasks.push_back(task_io_of(attempt, *entry.io));
  // Flink's ExecutionDeploymentReport: every execution of the job held here, so that the
  // JobMaster fails the ones it expects and we lost, and cancels the ones it does not know.
  for (const auto& [attempt, t] : state_->tasks())
    if (t.job == job && !t.orphaned) // an orphan is ending and reports to nobody
      report.deployed_executions.push_back(attempt);
  report.reports_deployments = true;
  return rpc::codec<job_master::task_io_report>::encode(report);
}

} // namespace flint::task_executor
