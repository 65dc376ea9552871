// The JobMaster's side of checkpointing: it drives the CheckpointCoordinator (plain logic in
// checkpoint/) on its main thread — timers, the trigger/confirm/abort RPCs to TaskExecutors, the
// tasks' acknowledgements and declines — writes the completed checkpoints' metadata, and gives
// every (re)deployed task the state it restores from (Flink's CheckpointCoordinator wiring in
// SchedulerBase and restoreLatestCheckpointedStateToSubtasks).

#include "runtime/actors/job_master/job_master.hpp"

#include "runtime/actors/job_master/checkpoint_metrics_wire.hpp"
#include "runtime/actors/job_master/failover_settings.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/config/config_options.hpp"
#include "runtime/ha/checkpoint_id_counter.hpp"
#include "runtime/ha/completed_checkpoint_store.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/job_result_store.hpp"
#include "runtime/state/checkpoint_storage.hpp"
#include "runtime/state/savepoint_files.hpp"
#include "runtime/state/state_assignment.hpp"
#include "runtime/state/state_backend_options.hpp"

#include <caf/all.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

namespace flint::job_master {

namespace {
/// The keys a task's RocksDB backend reads (Flink's RocksDBConfigurableOptions and
/// RocksDBOptions), shipped to it in its deployment descriptor.
constexpr std::string_view rocksdb_key_prefix = "state.backend.rocksdb.";
} // namespace

using graph::execution_state;
using graph::job_status;

checkpoint::time_ms job_master::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(epoch_at_start_
                                                               + (clock().now() - clock_at_start_))
    .count();
}

bool job_master::create_checkpoint_coordinator() {
  auto config = job_configuration(config_.configuration, job_graph_);
  auto settings = checkpoint::make_checkpoint_settings(config, job_graph_.checkpointing.interval);
  if (!settings) {
    fail_before_start("Could not start job " + job_id_.to_string() + ": "
                      + settings.error().message);
    return false;
  }
  // Always a coordinator, as Flink has for streaming jobs: savepoints need one even when
  // periodic checkpoints are off (interval 0: its scheduler never starts).
  // The job's state backend settings (its own over the cluster's, as job_configuration merged
  // them), checked here so a bad value fails the job before it starts, not every task.
  auto backend = state::keyed_state_backend_options_from(config);
  if (!backend) {
    fail_before_start("Could not start job " + job_id_.to_string() + ": "
                      + backend.error().message);
    return false;
  }
  state_backend_ = backend->type;
  incremental_checkpoints_ = backend->incremental;
  state_backend_configuration_.clear();
  for (const auto& key : config.keys())
    if (key.starts_with(rocksdb_key_prefix))
      state_backend_configuration_[key] = *config.get_raw(key);
  auto checkpoints_dir = config.find(config::options::state_checkpoints_dir);
  if (!checkpoints_dir) {
    fail_before_start("Could not start job " + job_id_.to_string() + ": "
                      + checkpoints_dir.error().message);
    return false;
  }
  if (*checkpoints_dir) {
    auto storage = state::checkpoint_storage::create((*checkpoints_dir)->string(), job_id_);
    if (!storage) {
      fail_before_start("Could not start job " + job_id_.to_string()
                        + ": cannot use the checkpoint directory (state.checkpoints.dir): "
                        + storage.error().message);
      return false;
    }
    checkpoint_storage_ = std::make_unique<state::checkpoint_storage>(std::move(*storage));
  }
  checkpoints_ = std::make_unique<checkpoint::checkpoint_coordinator>(
    job_id_, *settings, static_cast<checkpoint::checkpoint_actions&>(*this), logger_);
  // REST's checkpoint history (Flink's web.checkpoints.history, default 10).
  if (config.get_raw("web.checkpoints.history")) {
    auto history = config.get_int("web.checkpoints.history");
    if (!history || *history < 0) {
      fail_before_start("Could not start job " + job_id_.to_string()
                        + ": web.checkpoints.history must be a whole number of at least 0");
      return false;
    }
    checkpoints_->set_history_size(static_cast<std::size_t>(*history));
  }
  if (services_.stores != nullptr) {
    checkpoint_ids_ = services_.stores->checkpoint_id_counter(job_id_);
    completed_store_ = services_.stores->completed_checkpoints(job_id_);
  }
  if (!recover_checkpoints())
    return false;
  // A recovered checkpoint wins over the savepoint the job was first submitted with.
  if (checkpoints_->latest_completed() == nullptr && !restore_initial_state())
    return false;
  if (settings->interval.count() <= 0)
    return true;
  logger_->info(
    "Checkpointing is enabled for job " + job_id_.to_string() + ": interval "
    + std::to_string(settings->interval.count()) + " ms, mode "
    + checkpoint::to_string(settings->mode) + ", storage "
    + (checkpoint_storage_ ? checkpoint_storage_->job_directory() : std::string("JobManager"))
    + ".");
  return true;
}

void job_master::register_checkpoint_methods() {
  using rpc::fencing;
  // Qualified: the member trigger_checkpoint (checkpoint_actions) hides the method's name.
  handle<flint::job_master::trigger_checkpoint>(
    fencing::fenced, [this](rpc::ack) -> expected<checkpoint_triggered> {
      if (!checkpoints_ || status() != job_status::running)
        return make_error(errc::illegal_state, "Job " + job_id_.to_string()
                                                 + " is not running: cannot take a checkpoint.");
      auto id = checkpoints_->trigger_checkpoint_on_demand(now_ms());
      if (!id)
        return make_error(id.error().code,
                          "Could not trigger a checkpoint: " + id.error().message);
      return checkpoint_triggered{*id};
    });
  handle_async<trigger_savepoint>(
    fencing::fenced,
    [this](trigger_savepoint_request req, rpc::reply_to<savepoint_response> reply) mutable {
      if (!checkpoints_ || status() != job_status::running) {
        reply(
          make_error(errc::illegal_state,
                     "Job " + job_id_.to_string() + " is not running: cannot take a savepoint."));
        return;
      }
      // Read as every path key is (config/file_path.hpp): a file:// URI is a path, another
      // scheme or a relative path an error naming what was given.
      std::filesystem::path target;
      if (!req.target_directory.empty()) {
        auto given = config::parse_path(req.target_directory, config::path_scope::shared);
        if (!given) {
          reply(make_error(errc::invalid_argument,
                           "Cannot use the savepoint target directory '" + req.target_directory
                             + "': " + given.error().message));
          return;
        }
        target = *given;
      } else {
        auto configured = config_.configuration.find(config::options::state_savepoints_dir);
        if (!configured) {
          reply(configured.error());
          return;
        }
        target = configured->value_or(std::filesystem::path());
      }
      if (target.empty()) {
        reply(make_error(errc::invalid_argument,
                         "No savepoint directory: give a target directory or set "
                         "state.savepoints.dir."));
        return;
      }
      auto dir = state::make_savepoint_directory(target.string(), job_id_);
      if (!dir) {
        reply(dir.error());
        return;
      }
      checkpoint::savepoint_request request{
        *dir, req.stop, [reply](expected<std::string> done) mutable {
          if (done)
            reply(savepoint_response{*done});
          else
            reply(make_error(done.error().code, "Savepoint failed: " + done.error().message));
        }};
      request.drain = req.stop && req.drain;
      auto started = checkpoints_->trigger_savepoint(now_ms(), std::move(request));
      if (!started) {
        std::error_code ec;
        std::filesystem::remove(*dir, ec);
        reply(make_error(started.error().code,
                         "Could not trigger a savepoint: " + started.error().message));
      }
    });
  handle<acknowledge_checkpoint>(
    fencing::fenced, [this](acknowledge_checkpoint_request req) -> expected<rpc::ack> {
      if (!checkpoints_) {
        logger_->error("Received AcknowledgeCheckpoint message for job " + req.job_id.to_string()
                       + " with no CheckpointCoordinator");
        return rpc::ack{};
      }
      checkpoints_->acknowledge(req.attempt, req.checkpoint_id, std::move(req.task_state),
                                now_ms(), from_wire(req.checkpoint_metrics));
      return rpc::ack{};
    });
  handle<decline_checkpoint>(
    fencing::fenced, [this](decline_checkpoint_request req) -> expected<rpc::ack> {
      if (!checkpoints_) {
        logger_->error("Received DeclineCheckpoint message for job " + req.job_id.to_string()
                       + " with no CheckpointCoordinator");
        return rpc::ack{};
      }
      checkpoints_->decline(req.attempt, req.checkpoint_id, req.cause, now_ms(),
                            req.task_not_ready ? checkpoint::failure_reason::task_not_ready
                                               : checkpoint::failure_reason::declined);
      return rpc::ack{};
    });
}

void job_master::checkpoint_job_status_changed(job_status to) {
  if (!checkpoints_)
    return;
  // Flink's CheckpointCoordinatorDeActivator: periodic checkpoints while the job is RUNNING.
  if (to == job_status::running)
    checkpoints_->start_scheduler();
  else if (graph::is_globally_terminal(to)) {
    // The result first (Flink's JobResultStore, FLIP-194): once checkpoints go, a next leader
    // must know the job ended rather than run it again from nothing. The Dispatcher finishes the
    // cleanup and marks the result clean.
    if (services_.stores != nullptr) {
      const auto* scheduler = state_.job_scheduler();
      ha::job_result_entry entry{job_id_, to, scheduler ? scheduler->failure_cause() : "", 0};
      if (auto dirty = services_.stores->job_results().create_dirty_result(entry);
          !dirty && dirty.error().code != errc::illegal_state) {
        logger_->error("Could not record that job " + job_id_.to_string() + " reached "
                       + std::string(graph::to_string(to))
                       + "; its checkpoints stay, so a next leader can resume it: "
                       + dirty.error().message);
        return;
      }
    }
    checkpoints_->shutdown(to, now_ms());
    delete_unused_shared_state(true);
    // Only the leader gets here (a suspended JobMaster just stops): the job's HA entries go.
    if (completed_store_)
      if (auto gone = completed_store_->shutdown(true); !gone)
        logger_->warn("Could not remove the checkpoint store entries of job " + job_id_.to_string()
                      + ": " + gone.error().message);
    if (checkpoint_ids_)
      if (auto gone = checkpoint_ids_->shutdown(true); !gone)
        logger_->warn("Could not remove the checkpoint id counter of job " + job_id_.to_string()
                      + ": " + gone.error().message);
  } else
    checkpoints_->stop_scheduler(now_ms());
}

void job_master::tasks_restarting(const std::vector<std::uint32_t>&) {
  if (checkpoints_)
    checkpoints_->abort_pending(checkpoint::failure_reason::job_failover, now_ms());
}

bool job_master::recover_checkpoints() {
  if (!completed_store_)
    return true;
  auto pointers = completed_store_->checkpoints();
  if (!pointers) {
    fail_before_start("Could not recover the checkpoints of job " + job_id_.to_string() + ": "
                      + pointers.error().message);
    return false;
  }
  if (pointers->empty())
    return true;
  logger_->info("Recovering checkpoints from the completed checkpoint store: "
                + std::to_string(pointers->size()) + " checkpoint(s) of job " + job_id_.to_string()
                + ".");
  std::size_t recovered = 0;
  std::int64_t latest = pointers->front().checkpoint_id;
  for (const auto& p : *pointers)
    latest = std::max(latest, p.checkpoint_id);
  for (const auto& p : *pointers) {
    auto metadata = state::load_checkpoint_metadata(p.metadata_path);
    if (!metadata && p.checkpoint_id == latest && metadata.error().code != errc::not_found) {
      // The latest checkpoint is there but cannot be read (corrupt, unreadable, a storage
      // failure): restoring an older one would silently go back in time, and its sinks would
      // commit again what the latest one committed. Nothing is deleted.
      return retry_recovery("Could not recover job " + job_id_.to_string()
                            + ": its latest checkpoint " + std::to_string(p.checkpoint_id) + " at "
                            + p.metadata_path + " cannot be read (" + metadata.error().message
                            + "); not restoring an older checkpoint instead. Its files are kept: "
                              "once it is readable, resume the job with flint run -s "
                            + p.metadata_path);
    }
    if (!metadata) {
      // Missing, or an older one: the newest readable one is restored.
      logger_->warn("Could not read checkpoint " + std::to_string(p.checkpoint_id) + " of job "
                    + job_id_.to_string() + " at " + p.metadata_path + ": "
                    + metadata.error().message);
      continue;
    }
    auto shared = std::make_shared<state::checkpoint_metadata>(std::move(*metadata));
    shared_state_.register_checkpoint(p.checkpoint_id, state::shared_state_files(*shared));
    checkpoints_->add_recovered(
      checkpoint::completed_checkpoint{p.checkpoint_id, shared->timestamp, shared->timestamp,
                                       shared->state_size(), p.metadata_path, std::move(shared)});
    ++recovered;
  }
  if (recovered > 0)
    if (const auto* latest = checkpoints_->latest_completed())
      restored_ = restored_checkpoint{latest->id, now_ms(), false, latest->external_pointer};
  if (recovered == 0) {
    fail_before_start("Could not read any of the " + std::to_string(pointers->size())
                      + " checkpoint(s) of job " + job_id_.to_string() + " from storage.");
    return false;
  }
  return true;
}

bool job_master::retry_recovery(const std::string& cause) {
  auto& strategy = failover_.restart_strategy;
  auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(clock().now().time_since_epoch());
  if (strategy)
    strategy->notify_failure(now);
  if (!strategy || !strategy->can_restart()) {
    fail_before_start(cause);
    return false;
  }
  auto delay = strategy->backoff_time();
  logger_->warn(cause + " Trying the recovery again in " + std::to_string(delay.count())
                + " ms (restart strategy).");
  // All of it again: a storage that failed for a moment may answer the next time.
  checkpoints_.reset();
  checkpoint_storage_.reset();
  checkpoint_ids_.reset();
  completed_store_.reset();
  shared_state_ = {};
  schedule_run_async([this] { start_execution(); }, delay);
  return false;
}

bool job_master::leads() const {
  return !services_.leads || services_.leads();
}

expected<std::int64_t> job_master::reserve_checkpoint_id(std::int64_t proposed) {
  if (!leads())
    return make_error(errc::illegal_state, "this JobMaster cannot confirm its leadership");
  if (!checkpoint_ids_)
    return proposed;
  // The counter is shared with former and later leaders: ids never repeat across them. One
  // behind this coordinator (a job restored from savepoint N) is moved up at once, as Flink's
  // setCount on restore, not counted up one round trip at a time.
  auto next = checkpoint_ids_->get();
  if (!next)
    return next.error();
  if (*next < proposed)
    if (auto set = checkpoint_ids_->set_count(proposed); !set)
      return set.error();
  return checkpoint_ids_->get_and_increment();
}

bool job_master::restore_initial_state() {
  const auto& restore = job_graph_.savepoint_restore;
  if (restore.path.empty())
    return true;
  auto fail = [&](const std::string& why) {
    fail_before_start("Could not start job " + job_id_.to_string() + " from savepoint "
                      + restore.path + ": " + why);
    return false;
  };
  // The path `flint savepoint` printed ("file:/..."), a file:// URI or a plain absolute path.
  auto path = config::parse_path(restore.path, config::path_scope::shared);
  if (!path)
    return fail(path.error().message);
  auto metadata = state::load_checkpoint_metadata(path->string());
  if (!metadata)
    return fail(metadata.error().message);
  std::vector<graph::operator_id> operators;
  for (const auto& vertex : job_graph_.vertices)
    for (const auto& op : vertex.operators)
      operators.push_back(op.id);
  if (auto matched = state::check_state_matched(*metadata, operators,
                                                restore.allow_non_restored_state, restore.path);
      !matched)
    return fail(matched.error().message);
  logger_->info("Starting job " + job_id_.to_string() + " from savepoint " + restore.path + " ("
                + (restore.allow_non_restored_state ? "allowing non restored state"
                                                    : "not allowing non restored state")
                + ") in " + graph::to_string(restore.claim_mode) + " mode");
  checkpoints_->restored_from(metadata->checkpoint_id);
  checkpoint::completed_checkpoint restored{
    metadata->checkpoint_id,
    metadata->timestamp,
    metadata->timestamp,
    metadata->state_size(),
    path->string(),
    std::make_shared<state::checkpoint_metadata>(std::move(*metadata))};
  restored_ = restored_checkpoint{restored.id, now_ms(), true, restored.external_pointer};
  if (restore.claim_mode == graph::recovery_claim_mode::claim) {
    // CLAIM: the snapshot is the job's first retained checkpoint, subsumed and deleted as its
    // own are. (Its files are never reused: the first checkpoint is a full one either way.)
    claimed_snapshot_ = restored.external_pointer;
    checkpoints_->add_recovered(std::move(restored));
  } else {
    // NO_CLAIM: only read. No checkpoint of the job refers to its files (backends reuse only
    // what lies under the job's shared/ directory), and nothing discards it.
    initial_restore_ = std::move(restored);
  }
  return true;
}

expected<unit> job_master::add_checkpoint_settings(graph::task_deployment_descriptor& tdd) {
  if (!checkpoints_)
    return unit{};
  if (checkpoints_->settings().interval.count() > 0)
    tdd.checkpointing.mode =
      checkpoints_->settings().mode == checkpoint::checkpointing_mode::exactly_once
      ? graph::checkpointing_mode::exactly_once
      : graph::checkpointing_mode::at_least_once;
  if (checkpoint_storage_)
    tdd.checkpointing.storage_dir = checkpoint_storage_->job_directory();
  tdd.checkpointing.state_backend = state_backend_;
  tdd.checkpointing.incremental = incremental_checkpoints_;
  tdd.checkpointing.state_backend_configuration = state_backend_configuration_;
  // The latest completed checkpoint, else the savepoint the job started from.
  const auto* latest = checkpoints_->latest_completed();
  if (latest == nullptr && initial_restore_)
    latest = &*initial_restore_;
  if (latest == nullptr || !latest->metadata)
    return unit{};
  const auto* scheduler = state_.job_scheduler();
  auto ejv = scheduler->graph().find_job_vertex(tdd.job_vertex_id);
  if (!ejv)
    return make_error(errc::not_found, "no vertex " + tdd.job_vertex_id.to_string());
  const auto& vertex = scheduler->graph().job_vertex_of(*ejv);
  state::vertex_operators operators;
  for (const auto& op : vertex.operators) {
    operators.operators.push_back(op.id);
    operators.uids.push_back(op.uid);
  }
  operators.parallelism = tdd.parallelism;
  operators.max_parallelism = tdd.max_parallelism;
  if (operators.operators.empty()) {
    // A vertex without operators (a plain invokable) has no state: it only learns it restores.
    tdd.restore = state::task_restore{latest->id, {}};
  } else {
    auto assigned = state::assign_states(*latest->metadata, operators);
    if (!assigned)
      return assigned.error();
    if (tdd.subtask_index < 0 || static_cast<std::size_t>(tdd.subtask_index) >= assigned->size())
      return make_error(errc::internal,
                        "no restore state for subtask " + std::to_string(tdd.subtask_index) + " of "
                          + tdd.task_name);
    tdd.restore = std::move((*assigned)[static_cast<std::size_t>(tdd.subtask_index)]);
  }
  // An operator the checkpoint does not know starts afresh: the task sees it absent.
  std::erase_if(tdd.restore->state.operators, [&](const state::operator_subtask_state& op) {
    return latest->metadata->find(op.operator_id) == nullptr;
  });
  auto restart = scheduler->exception_history().restarts();
  if (!restore_logged_ || restore_logged_->first != latest->id
      || restore_logged_->second != restart) {
    restore_logged_ = std::make_pair(latest->id, restart);
    logger_->info("Restoring job " + job_id_.to_string() + " from "
                  + (latest->metadata->is_savepoint ? "Savepoint " : "Checkpoint ")
                  + std::to_string(latest->id) + " @ " + std::to_string(latest->trigger_time)
                  + " for " + job_id_.to_string() + " located at "
                  + (latest->external_pointer.empty()
                       ? std::string("<checkpoint-not-externally-addressable>")
                       : latest->external_pointer)
                  + ".");
  }
  return unit{};
}

// -- checkpoint actions ---------------------------------------------------------------------------

checkpoint::checkpoint_plan job_master::plan_checkpoint() {
  checkpoint::checkpoint_plan plan;
  const auto* scheduler = state_.job_scheduler();
  if (scheduler == nullptr) {
    plan.all_running = false;
    return plan;
  }
  const auto& graph = scheduler->graph();
  const auto& vertices = graph.vertices();
  auto finished = [&](std::uint32_t v) {
    return vertices[v].current_execution.state() == execution_state::finished;
  };
  for (std::uint32_t v = 0; v < vertices.size(); ++v) {
    auto attempt = graph.attempt_id(v);
    if (finished(v)) {
      plan.finished.push_back(attempt);
      continue;
    }
    plan.to_acknowledge.push_back(attempt);
    if (vertices[v].current_execution.state() != execution_state::running)
      plan.all_running = false;
    // Triggered: a task none of whose producers still runs (a source, or a task whose inputs
    // all finished: it takes the checkpoint at the end of its input, FLIP-147).
    bool producers_finished = true;
    for (auto g : vertices[v].consumed_partition_groups) {
      const auto& group = graph.consumed_partition_groups()[g];
      for (std::uint32_t i = 0; i < group.size && producers_finished; ++i)
        producers_finished = finished(graph.partitions()[group.first_partition + i].producer);
    }
    if (producers_finished)
      plan.to_trigger.push_back(attempt);
  }
  return plan;
}

std::optional<rpc::gateway> job_master::task_executor_of(
  const graph::execution_attempt_id& attempt) const {
  const auto* scheduler = state_.job_scheduler();
  if (scheduler == nullptr)
    return std::nullopt;
  auto vertex = scheduler->vertex_of(attempt);
  if (!vertex)
    return std::nullopt;
  auto slot = scheduler->slot_of(*vertex);
  if (!slot)
    return std::nullopt;
  return task_executor_gateway(*slot);
}

void job_master::trigger_checkpoint(const graph::execution_attempt_id& task,
                                    std::int64_t checkpoint_id, checkpoint::time_ms timestamp) {
  auto decline = [this, task, checkpoint_id](const std::string& cause) {
    if (checkpoints_)
      checkpoints_->decline(task, checkpoint_id, cause, now_ms(),
                            checkpoint::failure_reason::task_not_ready);
  };
  auto te = task_executor_of(task);
  if (!te) {
    run_async([decline, task] {
      decline("The TaskExecutor of task " + task.to_string() + " is not connected.");
    });
    return;
  }
  const auto* pending = checkpoints_ ? checkpoints_->pending(checkpoint_id) : nullptr;
  bool stop = pending != nullptr && pending->savepoint && pending->savepoint->stop;
  bool drain = stop && pending->savepoint->drain;
  te->ask<task_executor::trigger_checkpoint>(
    *this, task_executor::trigger_checkpoint_request{job_id_, task, checkpoint_id, timestamp, stop, drain},
    [decline, task](expected<rpc::ack> r) {
      // A task that finished or failed meanwhile cannot take part: not the checkpoint's fault.
      if (!r)
        decline("Could not trigger the checkpoint at task " + task.to_string() + ": "
                + r.error().message);
    });
}

void job_master::notify_checkpoint_complete(const graph::execution_attempt_id& task,
                                            std::int64_t checkpoint_id) {
  if (auto te = task_executor_of(task))
    te->tell<task_executor::confirm_checkpoint>(
      *this, task_executor::checkpoint_notification{job_id_, task, checkpoint_id});
}

void job_master::notify_checkpoint_aborted(const graph::execution_attempt_id& task,
                                           std::int64_t checkpoint_id) {
  if (auto te = task_executor_of(task))
    te->tell<task_executor::abort_checkpoint>(
      *this, task_executor::checkpoint_notification{job_id_, task, checkpoint_id});
}

void job_master::schedule_trigger(std::chrono::milliseconds delay, std::uint64_t generation) {
  schedule_run_async(
    [this, generation] {
      if (checkpoints_)
        checkpoints_->on_trigger_timer(generation, now_ms());
    },
    delay);
}

void job_master::schedule_timeout(std::chrono::milliseconds delay, std::int64_t checkpoint_id) {
  schedule_run_async(
    [this, checkpoint_id] {
      if (checkpoints_)
        checkpoints_->on_checkpoint_timeout(checkpoint_id, now_ms());
    },
    delay);
}

void job_master::fail_job(const std::string& cause) {
  if (auto* scheduler = state_.job_scheduler())
    scheduler->handle_global_failure(cause);
}

expected<checkpoint::finalized_checkpoint> job_master::finalize_checkpoint(
  const checkpoint::pending_checkpoint& p) {
  // A JobManager that woke after its session expired completes nothing: the next leader owns
  // the job's checkpoints.
  if (!leads())
    return make_error(errc::illegal_state, "this JobMaster cannot confirm its leadership");
  const auto& graph = state_.job_scheduler()->graph();
  auto metadata = std::make_shared<state::checkpoint_metadata>();
  metadata->checkpoint_id = p.id;
  metadata->timestamp = p.trigger_time;
  // One operator_state per operator of every chain, in the job's vertex order.
  std::map<graph::operator_id, std::size_t> index_of;
  for (const auto& ejv : graph.job_vertices()) {
    const auto& vertex = graph.job_graph().vertices[ejv.job_vertex];
    for (const auto& op : vertex.operators) {
      state::operator_state s;
      s.operator_id = op.id;
      s.uid = op.uid;
      s.parallelism = ejv.parallelism;
      s.max_parallelism = ejv.max_parallelism;
      s.subtasks.resize(static_cast<std::size_t>(ejv.parallelism));
      s.finished.resize(static_cast<std::size_t>(ejv.parallelism), false);
      for (auto& subtask : s.subtasks)
        subtask.operator_id = op.id;
      index_of[op.id] = metadata->operators.size();
      metadata->operators.push_back(std::move(s));
    }
  }
  auto subtask_of = [](const graph::execution_attempt_id& task) {
    return static_cast<std::size_t>(task.subtask_index);
  };
  for (const auto& [task, snapshot] : p.task_states)
    for (const auto& op : snapshot.operators) {
      auto it = index_of.find(op.operator_id);
      if (it == index_of.end()
          || subtask_of(task) >= metadata->operators[it->second].subtasks.size())
        return make_error(errc::internal,
                          "task " + task.to_string() + " acknowledged state for unknown operator "
                            + op.operator_id.to_string());
      auto& target = metadata->operators[it->second];
      target.subtasks[subtask_of(task)] = op;
      target.finished[subtask_of(task)] = snapshot.finished;
    }
  for (const auto& task : p.plan.finished) {
    auto ejv = graph.find_job_vertex(task.job_vertex);
    if (!ejv)
      continue;
    for (const auto& op : graph.job_vertex_of(*ejv).operators)
      metadata->operators[index_of.at(op.id)].finished[subtask_of(task)] = true;
  }
  std::string pointer;
  if (p.savepoint) {
    // A savepoint owns its files: copied out of chk-<n>, which then goes.
    metadata->is_savepoint = true;
    if (auto moved = state::relocate_state_files(*metadata, p.savepoint->directory); !moved)
      return moved.error();
    auto written = state::write_metadata_into(p.savepoint->directory, *metadata);
    if (!written)
      return written.error();
    if (checkpoint_storage_)
      (void)checkpoint_storage_->discard_checkpoint(p.id);
    pointer = p.savepoint->directory;
  } else if (checkpoint_storage_) {
    // A snapshot may refer to a file deleted while it was pending (it reused what its backend
    // last heard of): such a checkpoint must never complete, or a restore would miss the file.
    auto shared_files = state::shared_state_files(*metadata);
    for (const auto& file : shared_files) {
      std::error_code ec;
      if (!shared_state_.in_use(file) && !std::filesystem::exists(file, ec))
        return make_error(errc::internal, "it refers to shared state file " + file
                                            + ", which no longer exists");
    }
    auto written = checkpoint_storage_->write_metadata(*metadata);
    if (!written)
      return written.error();
    pointer = *written;
    // Registered before any task hears of it: a sink commits only what a next leader restores.
    if (completed_store_)
      if (auto added = completed_store_->add({p.id, pointer}); !added) {
        // The outcome may be unknown (a lost connection after the write went through): the
        // store is read again, and the files go only if it surely does not point to them
        // (FLINK-25486). A pointer to deleted files would be a next leader's restore.
        auto stored = completed_store_->checkpoints();
        bool absent = stored.has_value()
          && std::none_of(stored->begin(), stored->end(),
                          [&](const ha::checkpoint_pointer& c) { return c.checkpoint_id == p.id; });
        if (absent)
          (void)checkpoint_storage_->discard_checkpoint(p.id);
        else
          logger_->warn("Keeping the files of checkpoint " + std::to_string(p.id) + " of job "
                        + job_id_.to_string()
                        + ": the completed checkpoint store may hold it after a failed add ("
                        + (stored ? std::string("it does") : stored.error().message) + ")");
        return make_error(added.error().code,
                          "could not add checkpoint " + std::to_string(p.id)
                            + " to the completed checkpoint store: " + added.error().message);
      }
    shared_state_.register_checkpoint(p.id, shared_files);
  }
  return checkpoint::finalized_checkpoint{std::move(metadata), std::move(pointer)};
}

void job_master::discard_checkpoint(const checkpoint::completed_checkpoint& c) {
  if (!leads()) {
    // The next leader may restore it: a deposed JobMaster deletes nothing.
    logger_->warn("Keeping checkpoint " + std::to_string(c.id) + " of job " + job_id_.to_string()
                  + ": this JobMaster cannot confirm its leadership.");
    return;
  }
  if (claimed_snapshot_ && c.external_pointer == *claimed_snapshot_) {
    discard_claimed_snapshot(c);
    return;
  }
  if (!checkpoint_storage_ || c.external_pointer.empty())
    return;
  // The pointer first: a next leader never finds one to deleted files.
  if (completed_store_)
    if (auto gone = completed_store_->remove(c.id); !gone) {
      logger_->warn("Could not remove checkpoint " + std::to_string(c.id) + " of job "
                    + job_id_.to_string() + " from the completed checkpoint store; its files stay: "
                    + gone.error().message);
      return;
    }
  if (auto gone = checkpoint_storage_->discard_checkpoint(c.id); !gone)
    logger_->warn("Could not discard checkpoint " + std::to_string(c.id) + " of job "
                  + job_id_.to_string() + ": " + gone.error().message);
  if (!c.metadata)
    return;
  shared_state_.unregister_checkpoint(state::shared_state_files(*c.metadata));
  delete_unused_shared_state(false);
}

void job_master::discard_claimed_snapshot(const checkpoint::completed_checkpoint& c) {
  // The files of its own directory go, then the directory if nothing else is left in it;
  // files elsewhere (a retained checkpoint's shared/ SSTs, which other checkpoints of the job
  // that wrote it may share) stay.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir(c.external_pointer);
  if (!fs::is_directory(dir, ec))
    dir = dir.parent_path();
  auto inside = [&](const std::string& file) {
    auto rel = fs::path(file).lexically_normal().lexically_relative(dir.lexically_normal());
    return !rel.empty() && *rel.begin() != "..";
  };
  if (c.metadata)
    for (const auto& file : state::all_state_files(*c.metadata))
      if (inside(file))
        fs::remove(file, ec);
  fs::remove(dir / state::metadata_file_name, ec);
  fs::remove(dir, ec); // only if empty
  logger_->info("Discarded the claimed snapshot " + c.external_pointer + " of job "
                + job_id_.to_string() + " (checkpoint " + std::to_string(c.id) + ", subsumed).");
  claimed_snapshot_.reset();
}

void job_master::delete_unused_shared_state(bool job_ended) {
  if (shared_state_.unused() == 0 || !leads())
    return;
  // Nothing can refer to a file again once the job ended; while it runs, the backends of the
  // latest completed checkpoint may still reuse what their base checkpoint held, and the
  // acknowledged snapshots of pending checkpoints hold what they hold.
  auto lowest_base = std::numeric_limits<std::int64_t>::max();
  std::set<std::string> in_flight;
  if (!job_ended) {
    const auto* latest = checkpoints_ ? checkpoints_->latest_completed() : nullptr;
    if (latest == nullptr || !latest->metadata)
      return;
    lowest_base = checkpoint::lowest_base_checkpoint(*latest->metadata);
    for (const auto& [id, pending] : checkpoints_->pending_checkpoints())
      for (const auto& [task, snapshot] : pending.task_states)
        for (const auto& op : snapshot.operators)
          for (const auto& handle : op.keyed)
            for (const auto& file : handle.shared_files)
              in_flight.insert(file.handle.path);
  }
  shared_state_.delete_unused(lowest_base, in_flight, [](const std::string& file) {
    std::error_code ec;
    std::filesystem::remove(file, ec);
  });
}

} // namespace flint::job_master

namespace flint::job_master {

job_status_response job_master::full_status_report() const {
  auto report = state_.status_report();
  // The JobGraph moves into the ExecutionGraph as the job starts.
  const auto* scheduler = state_.job_scheduler();
  const auto& config =
    scheduler ? scheduler->graph().job_graph().execution_config : job_graph_.execution_config;
  // Flink's job type: execution.runtime-mode BATCH makes every edge blocking.
  report.job_type = config.exchange_mode == graph::global_data_exchange_mode::all_edges_blocking
    ? "BATCH"
    : "STREAMING";
  report.max_parallelism = config.max_parallelism;
  for (const auto& [key, value] : config.job_configuration)
    report.job_configuration.push_back(config_entry{key, value});
  report.restored = restored_;
  if (!checkpoints_)
    return report;
  auto stats = checkpoints_->stats();
  report.checkpointing = true;
  report.checkpoints.completed = stats.completed;
  report.checkpoints.failed = stats.failed;
  report.checkpoints.in_progress = stats.in_progress;
  if (stats.latest_completed) {
    const auto& latest = *stats.latest_completed;
    report.checkpoints.latest_id = latest.id;
    report.checkpoints.latest_duration_ms = latest.completion_time - latest.trigger_time;
    report.checkpoints.latest_state_bytes = latest.state_bytes;
    report.checkpoints.latest_external_path = latest.external_pointer;
  }
  const auto& s = checkpoints_->settings();
  auto& c = report.checkpoint_config;
  c.interval_ms = s.interval.count();
  c.timeout_ms = s.timeout.count();
  c.min_pause_ms = s.min_pause.count();
  c.max_concurrent = s.max_concurrent;
  c.mode = checkpoint::to_string(s.mode);
  c.tolerable_failures = s.tolerable_failures;
  c.retention = checkpoint::to_string(s.retention);
  c.state_backend = state_backend_;
  c.checkpoint_storage = checkpoint_storage_ ? checkpoint_storage_->job_directory() : "";
  for (const auto& r : checkpoints_->history()) {
    checkpoint_entry out;
    out.id = r.id;
    out.status = r.status == checkpoint::checkpoint_record::state::completed ? "COMPLETED"
      : r.status == checkpoint::checkpoint_record::state::failed             ? "FAILED"
                                                                               : "IN_PROGRESS";
    out.savepoint = r.savepoint;
    out.stop = r.stop;
    out.trigger_time = r.trigger_time;
    out.end_time = r.end_time;
    out.state_bytes = r.state_bytes;
    out.external_path = r.external_path;
    out.failure_message = r.failure_message;
    for (const auto& [task, ack] : r.tasks) {
      checkpoint_task t{task.job_vertex.to_string(), task.subtask_index, ack.first, ack.second};
      if (auto m = r.task_metrics.find(task); m != r.task_metrics.end())
        t.metrics = to_wire(m->second);
      out.tasks.push_back(std::move(t));
    }
    report.checkpoint_history.push_back(std::move(out));
  }
  return report;
}

} // namespace flint::job_master
