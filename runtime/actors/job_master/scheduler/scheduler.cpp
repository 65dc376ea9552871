#include "runtime/actors/job_master/scheduler/scheduler.hpp"

#include <algorithm>
#include <queue>

#include <spdlog/spdlog.h>

namespace flint::job_master {

using graph::execution_state;
using graph::job_status;

scheduler::scheduler(graph::execution_graph graph, scheduler_settings settings,
                     scheduler_actions& actions, std::shared_ptr<spdlog::logger> logger)
  : graph_(std::move(graph)),
    settings_(settings),
    actions_(actions),
    logger_(std::move(logger)),
    region_scheduled_(graph_.regions().size(), false),
    slot_of_vertex_(graph_.vertices().size()),
    deployed_to_(graph_.vertices().size()),
    deploying_at_ms_(graph_.vertices().size(), -1),
    ended_at_ms_(graph_.vertices().size(), -1),
    deployment_confirmed_(graph_.vertices().size(), false),
    partition_finished_(graph_.partitions().size(), false) {
  compute_region_order();
  consumers_of_group_.assign(graph_.consumed_partition_groups().size(), 0);
  finished_consumers_of_group_.assign(graph_.consumed_partition_groups().size(), 0);
  done_groups_of_partition_.assign(graph_.partitions().size(), 0);
  partition_released_.assign(graph_.partitions().size(), false);
  consumer_counted_.assign(graph_.vertices().size(), false);
  for (const auto& ev : graph_.vertices())
    for (std::uint32_t g : ev.consumed_partition_groups)
      if (is_cross_region_group(g))
        ++consumers_of_group_[g];
  failover_strategy_ = settings_.failover_strategy
    ? settings_.failover_strategy(graph_)
    : failover::make_failover_strategy(failover::failover_strategy_kind::region, graph_);
}

std::chrono::nanoseconds scheduler::now() const {
  return settings_.clock ? settings_.clock() : std::chrono::nanoseconds{0};
}

void scheduler::log_info(const std::string& text) const {
  if (logger_)
    logger_->info(text);
}

// -- regions ------------------------------------------------------------------------------------

void scheduler::compute_region_order() {
  // Regions are tied only by blocking exchanges. Each region reads a few distinct consumed
  // partition groups (shared by all consumers of an ALL_TO_ALL edge), so the work is per group,
  // not per producer x consumer.
  const auto& regions = graph_.regions();
  region_inputs_.assign(regions.size(), {});
  std::vector<std::vector<std::uint32_t>> producers_of_group(
    graph_.consumed_partition_groups().size());
  std::vector<bool> group_done(producers_of_group.size(), false);
  for (std::uint32_t r = 0; r < regions.size(); ++r) {
    std::set<std::uint32_t> groups;
    for (std::uint32_t v : regions[r].vertices)
      for (std::uint32_t g : graph_.vertices()[v].consumed_partition_groups) {
        const auto& group = graph_.consumed_partition_groups()[g];
        if (!graph::is_pipelined(graph_.results()[group.result].result_type))
          groups.insert(g);
      }
    region_inputs_[r].assign(groups.begin(), groups.end());
  }
  finished_in_group_.assign(graph_.consumed_partition_groups().size(), 0);
  groups_of_partition_.assign(graph_.partitions().size(), {});
  std::vector<bool> indexed(graph_.consumed_partition_groups().size(), false);
  for (const auto& inputs : region_inputs_)
    for (std::uint32_t g : inputs)
      if (!indexed[g]) {
        indexed[g] = true;
        const auto& group = graph_.consumed_partition_groups()[g];
        for (std::uint32_t p = 0; p < group.size; ++p)
          groups_of_partition_[group.first_partition + p].push_back(g);
      }
  std::vector<std::set<std::uint32_t>> consumers(regions.size());
  std::vector<std::uint32_t> indegree(regions.size(), 0);
  for (std::uint32_t r = 0; r < regions.size(); ++r)
    for (std::uint32_t g : region_inputs_[r]) {
      if (!group_done[g]) {
        group_done[g] = true;
        const auto& group = graph_.consumed_partition_groups()[g];
        std::set<std::uint32_t> producer_regions;
        for (std::uint32_t p = 0; p < group.size; ++p)
          producer_regions.insert(
            graph_.vertices()[graph_.partitions()[group.first_partition + p].producer].region);
        producers_of_group[g].assign(producer_regions.begin(), producer_regions.end());
      }
      for (auto pr : producers_of_group[g])
        if (pr != r && consumers[pr].insert(r).second)
          ++indegree[r];
    }
  // Kahn's algorithm, smallest region index first among the ready ones, for a stable order.
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t r = 0; r < regions.size(); ++r)
    if (indegree[r] == 0)
      ready.push(r);
  while (!ready.empty()) {
    auto r = ready.top();
    ready.pop();
    region_order_.push_back(r);
    for (auto c : consumers[r])
      if (--indegree[c] == 0)
        ready.push(c);
  }
}

bool scheduler::region_inputs_consumable(std::uint32_t region) const {
  // A blocking result is consumable once every partition of it the region reads is finished.
  for (std::uint32_t g : region_inputs_[region])
    if (finished_in_group_[g] < graph_.consumed_partition_groups()[g].size)
      return false;
  return true;
}

std::vector<std::uint32_t> scheduler::produced_partitions(std::uint32_t vertex) const {
  const auto& ev = graph_.vertices()[vertex];
  std::vector<std::uint32_t> out;
  for (std::uint32_t r : graph_.job_vertices()[ev.job_vertex].produced_results)
    out.push_back(graph_.results()[r].first_partition
                  + static_cast<std::uint32_t>(ev.subtask_index));
  return out;
}

void scheduler::partitions_finished(std::uint32_t vertex) {
  for (auto partition : produced_partitions(vertex)) {
    if (partition_finished_[partition])
      continue;
    partition_finished_[partition] = true;
    for (std::uint32_t g : groups_of_partition_[partition])
      ++finished_in_group_[g];
  }
}

void scheduler::partitions_rewritten(std::uint32_t vertex) {
  for (auto partition : produced_partitions(vertex)) {
    partition_released_[partition] = false; // the new attempt writes it anew
    if (!partition_finished_[partition])
      continue;
    partition_finished_[partition] = false;
    for (std::uint32_t g : groups_of_partition_[partition])
      --finished_in_group_[g];
  }
}

bool scheduler::partition_available(std::uint32_t partition) const {
  // Flink's ResultPartitionAvailabilityChecker: the data is there while its producer's
  // TaskExecutor is.
  if (!partition_finished_[partition] || partition_released_[partition])
    return false;
  const auto& where = deployed_to_[graph_.partitions()[partition].producer];
  return where && lost_task_managers_.count(where->location.id) == 0;
}

void scheduler::start_scheduling() {
  if (status() != job_status::created)
    return;
  log_info("Starting scheduling with scheduling strategy [PipelinedRegionSchedulingStrategy]");
  transition_job(job_status::running);
  maybe_schedule_regions();
}

void scheduler::maybe_schedule_regions() {
  for (auto r : region_order_) {
    if (status() != job_status::running)
      return;
    if (!region_scheduled_[r] && region_inputs_consumable(r))
      schedule_region(r);
  }
}

void scheduler::schedule_region(std::uint32_t region) {
  region_scheduled_[region] = true;
  std::vector<std::uint32_t> batch;
  for (std::uint32_t v : graph_.regions()[region].vertices) {
    if (!transition(v, execution_state::scheduled))
      continue;
    const auto& ev = graph_.vertices()[v];
    slot_key key{graph_.job_vertex_of(ev.job_vertex).slot_sharing_group, ev.subtask_index};
    slot_of_vertex_[v] = key;
    auto [i, inserted] = shared_slots_.try_emplace(key);
    auto& shared = i->second;
    shared.users.insert(v);
    batch.push_back(v);
    if (inserted) {
      shared.request = slot_pool::slot_request_id{graph_.job_graph().job_id.upper() ^ 0x51075107u,
                                                  next_request_++};
      key_of_request_[shared.request] = key;
      shared.requested_at = now();
      actions_.allocate_slot(shared.request, cluster::resource_profile{});
    }
  }
  batches_.push_back(std::move(batch));
  deploy_ready_batches();
}

// -- slots and deployment -------------------------------------------------------------------------

scheduler::shared_slot* scheduler::slot_record(std::uint32_t vertex) {
  if (vertex >= slot_of_vertex_.size() || !slot_of_vertex_[vertex])
    return nullptr;
  auto i = shared_slots_.find(*slot_of_vertex_[vertex]);
  return i == shared_slots_.end() ? nullptr : &i->second;
}

void scheduler::on_slot_allocated(const slot_pool::slot_request_id& request,
                                  expected<slot_pool::allocated_slot> result) {
  auto k = key_of_request_.find(request);
  if (k == key_of_request_.end()) {
    // Released meanwhile (the job ends or was cancelled): give a late slot back.
    if (result)
      actions_.release_slot(request, "The slot is no longer needed.");
    return;
  }
  auto& shared = shared_slots_.at(k->second);
  if (!result) {
    // Flink's NoResourceAvailableException: no restart can find what the cluster does not have,
    // so the job fails whatever the restart strategy says.
    auto users = shared.users;
    std::string cause = result.error().message;
    for (auto v : users)
      if (!is_terminal(graph_.vertices()[v].current_execution.state())) {
        auto text = "Could not allocate a slot for " + graph_.task_name_with_subtask(v) + ": "
          + "NoResourceAvailableException: " + cause;
        if (transition(v, execution_state::failed, text))
          vertex_terminal(v);
        history_.add(
          failover::exception_entry{now_ms(), graph_.task_name_with_subtask(v), {}, text, false});
        fail_job(graph_.task_name_with_subtask(v) + " failed: " + text);
        break; // the others are canceled with the job
      }
    return;
  }
  shared.slot = *result;
  if (shared.users.empty()) {
    auto key = k->second;
    key_of_request_.erase(k);
    shared_slots_.erase(key);
    actions_.release_slot(request, "The slot is no longer needed.");
    return;
  }
  deploy_ready_batches();
}

void scheduler::deploy_ready_batches() {
  // Flink's waitForAllSlotsAndDeploy: a region is deployed once all of its slots are assigned.
  for (auto b = batches_.begin(); b != batches_.end();) {
    bool ready = std::all_of(b->begin(), b->end(), [&](std::uint32_t v) {
      auto* s = slot_record(v);
      return s == nullptr || s->slot.has_value()
        || graph_.vertices()[v].current_execution.state() != execution_state::scheduled;
    });
    if (!ready) {
      ++b;
      continue;
    }
    auto batch = std::move(*b);
    b = batches_.erase(b);
    for (auto v : batch) {
      if (status() != job_status::running)
        return;
      if (graph_.vertices()[v].current_execution.state() == execution_state::scheduled)
        deploy(v);
    }
    b = batches_.begin();
  }
}

std::string scheduler::location_text(const slot_pool::allocated_slot& slot) const {
  return slot.location.id + " @ " + (slot.location.host.empty() ? "localhost" : slot.location.host)
    + " (dataPort=" + std::to_string(slot.location.data_port) + ")";
}

void scheduler::deploy(std::uint32_t vertex) {
  // Execution#deploy: the slot must be alive, the state CREATED or SCHEDULED.
  auto* shared = slot_record(vertex);
  if (shared == nullptr || !shared->slot) {
    mark_failed(vertex, "In order to deploy the execution we first have to assign a resource.");
    return;
  }
  if (!shared->alive) {
    mark_failed(vertex, "Target slot (TaskManager) for deployment is no longer alive.");
    return;
  }
  auto previous = graph_.vertices()[vertex].current_execution.state();
  if (previous != execution_state::scheduled && previous != execution_state::created) {
    mark_failed(vertex,
                "The vertex must be in CREATED or SCHEDULED state to be deployed. Found state "
                  + std::string(to_string(previous)));
    return;
  }
  if (!transition(vertex, execution_state::deploying))
    return;
  const auto& slot = *shared->slot;
  deployed_to_[vertex] = slot;
  deployment_confirmed_[vertex] = false;
  auto attempt = graph_.attempt_id(vertex);
  log_info("Deploying " + graph_.task_name_with_subtask(vertex) + " (attempt #"
           + std::to_string(attempt.attempt_number) + ") with attempt id " + attempt.to_string()
           + " to " + location_text(slot) + " with allocation id "
           + slot.allocation_id.to_string());
  // Flink's ShuffleDescriptor: each consumed partition names its producer's TaskExecutor and data
  // address, so the consumer knows whether to read it locally or ask that TaskExecutor for it.
  // A finished producer of a blocking result gave its slot back: its partition stays where it ran.
  auto locate = [this](std::uint32_t producer) -> std::optional<graph::producer_location> {
    const auto* shared = slot_record(producer);
    const auto& deployed = shared && shared->slot ? shared->slot : deployed_to_[producer];
    if (!deployed)
      return std::nullopt;
    const auto& where = deployed->location;
    return graph::producer_location{where.id, where.host, where.data_port};
  };
  auto tdd = graph::make_task_deployment_descriptor(graph_, vertex, locate);
  if (!tdd) {
    mark_failed(vertex, "Could not create the TaskDeploymentDescriptor: " + tdd.error().message);
    return;
  }
  actions_.submit_task(attempt, slot, std::move(*tdd));
}

void scheduler::on_submit_result(const graph::execution_attempt_id& attempt,
                                 expected<unit> result) {
  if (result) {
    // Flink's ExecutionDeploymentTracker#completeDeploymentOf: from now on the TaskExecutor
    // must report the execution with each heartbeat, or it is missing there.
    if (auto v = vertex_of(attempt);
        v && !is_terminal(graph_.vertices()[*v].current_execution.state()))
      deployment_confirmed_[*v] = true;
    return;
  }
  auto v = vertex_of(attempt);
  if (!v || is_terminal(graph_.vertices()[*v].current_execution.state()))
    return;
  std::string cause = result.error().message;
  if (result.error().code == errc::timeout) {
    auto* shared = slot_record(*v);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.rpc_timeout).count();
    cause = "Cannot deploy task " + graph_.task_name_with_subtask(*v) + " (" + attempt.to_string()
      + ") - TaskManager (" + (shared && shared->slot ? location_text(*shared->slot) : "?")
      + ") not responding after a rpcTimeout of " + std::to_string(ms) + " ms";
  }
  mark_failed(*v, cause);
}

void scheduler::on_cancel_result(const graph::execution_attempt_id& attempt,
                                 expected<unit> result) {
  if (result)
    return;
  auto v = vertex_of(attempt);
  if (!v || graph_.vertices()[*v].current_execution.state() != execution_state::canceling)
    return;
  if (transition(*v, execution_state::failed,
                 "Task could not be canceled: " + result.error().message)) {
    vertex_terminal(*v);
    check_job_terminal();
    maybe_restart();
  }
}

// -- task states ----------------------------------------------------------------------------------

std::optional<std::uint32_t> scheduler::vertex_of(
  const graph::execution_attempt_id& attempt) const {
  // An attempt of another graph (a former leadership's) is never one of ours.
  if (attempt.execution_graph != graph_.id())
    return std::nullopt;
  auto ejv = graph_.find_job_vertex(attempt.job_vertex);
  if (!ejv)
    return std::nullopt;
  const auto& jv = graph_.job_vertices()[*ejv];
  if (attempt.subtask_index < 0 || attempt.subtask_index >= jv.parallelism)
    return std::nullopt;
  auto v = jv.first_vertex + static_cast<std::uint32_t>(attempt.subtask_index);
  if (graph_.vertices()[v].current_execution.attempt_number() != attempt.attempt_number)
    return std::nullopt;
  return v;
}

std::optional<slot_pool::allocated_slot> scheduler::slot_of(std::uint32_t vertex) const {
  if (vertex >= slot_of_vertex_.size() || !slot_of_vertex_[vertex])
    return std::nullopt;
  auto i = shared_slots_.find(*slot_of_vertex_[vertex]);
  if (i == shared_slots_.end())
    return std::nullopt;
  return i->second.slot;
}

expected<unit> scheduler::update_task_execution_state(const cluster::task_execution_state& state) {
  if (state.job != graph_.job_graph().job_id)
    return make_error(errc::not_found,
                      "Task execution state of job " + state.job.to_string()
                        + " sent to the JobMaster of job " + graph_.job_graph().job_id.to_string());
  auto v = vertex_of(state.attempt);
  if (!v)
    return make_error(errc::not_found,
                      "Cannot find execution with attempt id " + state.attempt.to_string() + ".");
  auto current = graph_.vertices()[*v].current_execution.state();
  // A terminal execution stays as it is; a repeated state (a task reporting DEPLOYING after the
  // JobMaster moved it there) changes nothing.
  if (is_terminal(current) || state.state == current)
    return unit{};
  switch (state.state) {
    case execution_state::initializing:
    case execution_state::running:
      // A task cancelled meanwhile may still report RUNNING: nothing to do.
      if (current != execution_state::canceling)
        transition(*v, state.state);
      return unit{};
    case execution_state::finished:
      if (current == execution_state::canceling) {
        // Flink's Execution#markFinished: the cancel call crossed the task finishing, and no
        // CANCELED will follow; complete the cancellation (else the job waits for it forever).
        if (transition(*v, execution_state::canceled)) {
          vertex_terminal(*v);
          check_job_terminal();
          maybe_restart();
        }
        return unit{};
      }
      if (transition(*v, execution_state::finished)) {
        partitions_finished(*v);
        consumer_finished(*v);
        vertex_terminal(*v);
        if (status() == job_status::running) {
          check_job_terminal();
          maybe_schedule_regions();
        } else {
          check_job_terminal();
        }
      }
      return unit{};
    case execution_state::failed: {
      auto cause =
        state.failure_cause.empty() ? std::string("unknown failure") : state.failure_cause;
      if (transition(*v, execution_state::failed, cause)) {
        vertex_terminal(*v);
        if (current == execution_state::canceling)
          check_job_terminal(); // it failed while we cancelled it: not a failure of its own
        else
          handle_task_failure(*v, cause);
        maybe_restart();
      }
      return unit{};
    }
    case execution_state::canceled:
      if (current == execution_state::canceling) {
        if (transition(*v, execution_state::canceled)) {
          vertex_terminal(*v);
          check_job_terminal();
          maybe_restart();
        }
      } else {
        mark_failed(*v,
                    "Task " + graph_.task_name_with_subtask(*v) + " was canceled unexpectedly.");
      }
      return unit{};
    default:
      if (auto legal = graph::check_transition(current, state.state); !legal)
        return make_error(errc::illegal_state,
                          graph_.task_name_with_subtask(*v) + ": " + legal.error().message);
      transition(*v, state.state);
      return unit{};
  }
}

bool scheduler::transition(std::uint32_t vertex, execution_state to, const std::string& cause) {
  auto from = graph_.vertices()[vertex].current_execution.state();
  auto moved = graph_.transition_execution(vertex, to);
  if (!moved) {
    if (logger_)
      logger_->warn(moved.error().message);
    return false;
  }
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now()).count();
  if (to == execution_state::deploying) {
    deploying_at_ms_[vertex] = now_ms;
    ended_at_ms_[vertex] = -1;
  } else if (graph::is_terminal(to)) {
    ended_at_ms_[vertex] = now_ms;
  }
  if (logger_) {
    // Flink's Execution.getVertexWithAttempt: "Map (1/2)#0".
    auto attempt = graph_.attempt_id(vertex);
    auto line = graph_.task_name_with_subtask(vertex) + "#" + std::to_string(attempt.attempt_number)
      + " (" + attempt.to_string() + ") switched from " + std::string(to_string(from)) + " to "
      + std::string(to_string(to));
    if (to == execution_state::failed && deployed_to_[vertex])
      line += " on " + location_text(*deployed_to_[vertex]);
    if (to == execution_state::failed && !cause.empty())
      logger_->info(line + " with failure cause: " + cause);
    else
      logger_->info(line + ".");
  }
  return true;
}

void scheduler::transition_job(job_status to, const std::string& cause) {
  auto from = status();
  if (auto moved = graph_.transition_state(to); !moved) {
    if (logger_)
      logger_->warn("Job " + graph_.job_graph().name + ": " + moved.error().message);
    return;
  }
  auto line = "Job " + graph_.job_graph().name + " (" + graph_.job_graph().job_id.to_string()
    + ") switched from state " + std::string(to_string(from)) + " to " + std::string(to_string(to));
  log_info(cause.empty() ? line + "." : line + ": " + cause);
  actions_.job_status_changed(from, to, cause);
}

void scheduler::mark_failed(std::uint32_t vertex, const std::string& cause) {
  auto state = graph_.vertices()[vertex].current_execution.state();
  if (is_terminal(state))
    return;
  if (!transition(vertex, execution_state::failed, cause))
    return;
  vertex_terminal(vertex);
  handle_task_failure(vertex, cause);
  maybe_restart();
}

void scheduler::vertex_terminal(std::uint32_t vertex) {
  if (vertex >= slot_of_vertex_.size() || !slot_of_vertex_[vertex])
    return;
  auto key = *slot_of_vertex_[vertex];
  slot_of_vertex_[vertex].reset();
  auto i = shared_slots_.find(key);
  if (i == shared_slots_.end())
    return;
  i->second.users.erase(vertex);
  if (!i->second.users.empty())
    return;
  // The last subtask left the shared slot: give it back to the pool (or withdraw its request).
  auto request = i->second.request;
  bool alive = i->second.alive;
  key_of_request_.erase(request);
  shared_slots_.erase(i);
  if (alive)
    actions_.release_slot(request, "All tasks of the slot are terminal.");
}

// -- job life -------------------------------------------------------------------------------------

void scheduler::cancel() {
  auto s = status();
  if (is_terminal(s) || s == job_status::cancelling)
    return;
  transition_job(job_status::cancelling);
  pending_restart_.clear();
  cancel_all_executions();
  check_job_terminal();
}

void scheduler::fail_job(const std::string& cause) {
  auto s = status();
  if (is_terminal(s) || s == job_status::failing || s == job_status::cancelling)
    return;
  failure_cause_ = cause;
  transition_job(job_status::failing, cause);
  pending_restart_.clear();
  cancel_all_executions();
  check_job_terminal();
}

void scheduler::cancel_all_executions() {
  batches_.clear();
  for (std::uint32_t v = 0; v < graph_.vertices().size(); ++v)
    cancel_execution(v);
}

void scheduler::cancel_execution(std::uint32_t v) {
  switch (graph_.vertices()[v].current_execution.state()) {
    case execution_state::created:
    case execution_state::scheduled:
      if (transition(v, execution_state::canceled))
        vertex_terminal(v);
      break;
    case execution_state::deploying:
    case execution_state::initializing:
    case execution_state::running:
    case execution_state::reconciling: {
      auto* shared = slot_record(v);
      if (shared == nullptr || !shared->slot || !shared->alive) {
        if (transition(v, execution_state::canceled))
          vertex_terminal(v);
      } else if (transition(v, execution_state::canceling)) {
        actions_.cancel_task(graph_.attempt_id(v), *shared->slot);
      }
      break;
    }
    default: break;
  }
}

void scheduler::check_job_terminal() {
  for (const auto& ev : graph_.vertices())
    if (!is_terminal(ev.current_execution.state()))
      return;
  auto s = status();
  if (s == job_status::running && pending_restart_.empty()) {
    bool all_finished = std::all_of(
      graph_.vertices().begin(), graph_.vertices().end(),
      [](const auto& ev) { return ev.current_execution.state() == execution_state::finished; });
    if (!all_finished)
      return;
    release_all_slots("The job finished.");
    transition_job(job_status::finished);
  } else if (s == job_status::failing) {
    release_all_slots("The job failed.");
    transition_job(job_status::failed, failure_cause_);
  } else if (s == job_status::cancelling) {
    release_all_slots("The job was cancelled.");
    transition_job(job_status::canceled);
  }
}

void scheduler::release_all_slots(const std::string& cause) {
  auto slots = std::move(shared_slots_);
  shared_slots_.clear();
  key_of_request_.clear();
  for (auto& [key, shared] : slots)
    if (shared.alive)
      actions_.release_slot(shared.request, cause);
}

std::size_t scheduler::fail_task_manager(const cluster::resource_id& task_manager,
                                         const std::string& cause) {
  // Its blocking partitions are gone with it: consumers that still need them make their
  // producers restart too (partition_available).
  lost_task_managers_.insert(task_manager);
  return fail_slots_where(
    [&](const slot_pool::allocated_slot& slot) { return slot.location.id == task_manager; }, cause);
}

std::size_t scheduler::fail_slot(const cluster::allocation_id& allocation,
                                 const std::string& cause) {
  return fail_slots_where(
    [&](const slot_pool::allocated_slot& slot) { return slot.allocation_id == allocation; }, cause);
}

std::size_t scheduler::fail_slots_where(
  const std::function<bool(const slot_pool::allocated_slot&)>& lost, const std::string& cause) {
  std::vector<std::uint32_t> victims;
  for (auto& [key, shared] : shared_slots_)
    if (shared.slot && lost(*shared.slot)) {
      shared.alive = false;
      victims.insert(victims.end(), shared.users.begin(), shared.users.end());
    }
  std::vector<std::pair<std::uint32_t, bool>> failed; // vertex, was it being cancelled
  for (auto v : victims) {
    auto state = graph_.vertices()[v].current_execution.state();
    if (is_terminal(state))
      continue;
    if (transition(v, execution_state::failed, cause)) {
      vertex_terminal(v);
      failed.emplace_back(v, state == execution_state::canceling);
    }
  }
  // Each lost execution is a task failure; the first one's restart covers the others of its
  // region, and a job already failing ends here once its last task is terminal.
  for (auto [v, cancelling] : failed)
    if (!cancelling)
      handle_task_failure(v, cause);
  check_job_terminal();
  maybe_restart();
  return failed.size();
}

// -- failover -------------------------------------------------------------------------------------

std::int64_t scheduler::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now()).count();
}

std::string scheduler::location_of(std::uint32_t vertex) const {
  return deployed_to_[vertex] ? location_text(*deployed_to_[vertex]) : std::string();
}

void scheduler::handle_task_failure(std::uint32_t vertex, const std::string& cause) {
  auto s = status();
  if (s != job_status::running && s != job_status::restarting) {
    check_job_terminal();
    return;
  }
  if (pending_restart_.count(vertex) != 0)
    return; // cancelled for a restart already: that restart recovers it
  history_.add(failover::exception_entry{now_ms(), graph_.task_name_with_subtask(vertex),
                                         location_of(vertex), cause, false});
  auto job_cause = graph_.task_name_with_subtask(vertex) + " failed: " + cause;
  if (!failover_strategy_) {
    if (logger_)
      logger_->info("Recovery is suppressed by NoRestartBackoffTimeStrategy");
    fail_job(job_cause);
    return;
  }
  if (!restart_allowed(job_cause))
    return;
  auto& restart = *settings_.restart_strategy;
  auto tasks = failover_strategy_->tasks_needing_restart(
    vertex, [this](std::uint32_t partition) { return partition_available(partition); });
  log_info(std::to_string(tasks.size()) + " tasks will be restarted to recover the failed task "
           + graph_.attempt_id(vertex).to_string() + ".");
  pending_restart_.insert(tasks.begin(), tasks.end());
  actions_.tasks_restarting(tasks);
  // A restart of every task is a restart of the job (Flink's RESTARTING); a region restart
  // leaves the job RUNNING and the other regions untouched.
  if (pending_restart_.size() == graph_.vertices().size() && s == job_status::running)
    transition_job(job_status::restarting, job_cause);
  for (auto& batch : batches_)
    std::erase_if(batch, [&](std::uint32_t v) { return pending_restart_.count(v) != 0; });
  std::erase_if(batches_, [](const auto& batch) { return batch.empty(); });
  for (auto v : tasks)
    cancel_execution(v);
  restart_delay_elapsed_ = false;
  actions_.schedule_restart(restart.backoff_time(), ++restart_number_);
}

bool scheduler::restart_allowed(const std::string& cause) {
  if (!settings_.restart_strategy) {
    if (logger_)
      logger_->info("Recovery is suppressed by NoRestartBackoffTimeStrategy");
    fail_job(cause);
    return false;
  }
  auto& restart = *settings_.restart_strategy;
  restart.notify_failure(now());
  if (!restart.can_restart()) {
    if (logger_)
      logger_->info("Recovery is suppressed by " + restart.description());
    fail_job(cause);
    return false;
  }
  return true;
}

void scheduler::handle_global_failure(const std::string& cause) {
  auto s = status();
  if (s != job_status::running && s != job_status::restarting)
    return;
  history_.add(failover::exception_entry{now_ms(), {}, {}, cause, true});
  if (!restart_allowed(cause))
    return;
  auto& restart = *settings_.restart_strategy;
  std::vector<std::uint32_t> tasks;
  for (std::uint32_t v = 0; v < graph_.vertices().size(); ++v)
    if (pending_restart_.insert(v).second)
      tasks.push_back(v);
  log_info(std::to_string(graph_.vertices().size())
           + " tasks will be restarted to recover from a global failure: " + cause);
  actions_.tasks_restarting(tasks);
  if (s == job_status::running)
    transition_job(job_status::restarting, cause);
  batches_.clear();
  for (auto v : tasks)
    cancel_execution(v);
  restart_delay_elapsed_ = false;
  actions_.schedule_restart(restart.backoff_time(), ++restart_number_);
}

void scheduler::on_restart_delay_elapsed(std::uint64_t restart) {
  if (restart != restart_number_ || pending_restart_.empty())
    return;
  restart_delay_elapsed_ = true;
  maybe_restart();
}

void scheduler::maybe_restart() {
  if (!restart_delay_elapsed_ || pending_restart_.empty())
    return;
  auto s = status();
  if (s != job_status::running && s != job_status::restarting)
    return;
  for (auto v : pending_restart_)
    if (!is_terminal(graph_.vertices()[v].current_execution.state()))
      return;
  auto vertices = std::move(pending_restart_);
  pending_restart_.clear();
  restart_delay_elapsed_ = false;
  history_.record_restart();
  for (auto v : vertices) {
    partitions_rewritten(v);
    consumer_restarts(v);
    if (auto reset = graph_.reset_for_new_execution(v); !reset) {
      fail_job("Could not restart " + graph_.task_name_with_subtask(v) + ": "
               + reset.error().message);
      return;
    }
    region_scheduled_[graph_.vertices()[v].region] = false;
  }
  if (s == job_status::restarting)
    transition_job(job_status::running);
  maybe_schedule_regions();
}

bool scheduler::is_cross_region_group(std::uint32_t group) const {
  const auto& g = graph_.consumed_partition_groups()[group];
  return !graph::is_pipelined(graph_.results()[g.result].result_type);
}

void scheduler::consumer_finished(std::uint32_t vertex) {
  if (consumer_counted_[vertex])
    return;
  consumer_counted_[vertex] = true;
  std::map<cluster::resource_id, std::vector<graph::intermediate_result_partition_id>> releases;
  for (std::uint32_t g : graph_.vertices()[vertex].consumed_partition_groups) {
    if (!is_cross_region_group(g) || ++finished_consumers_of_group_[g] < consumers_of_group_[g])
      continue;
    const auto& group = graph_.consumed_partition_groups()[g];
    for (std::uint32_t i = 0; i < group.size; ++i) {
      auto p = group.first_partition + i;
      if (++done_groups_of_partition_[p] < groups_of_partition_[p].size() || partition_released_[p])
        continue;
      const auto& where = deployed_to_[graph_.partitions()[p].producer];
      if (!where || lost_task_managers_.count(where->location.id) != 0)
        continue;
      partition_released_[p] = true;
      releases[where->location.id].push_back(graph_.partition_id(p));
    }
  }
  for (auto& [task_manager, partitions] : releases)
    actions_.release_partitions(task_manager, std::move(partitions));
}

void scheduler::consumer_restarts(std::uint32_t vertex) {
  if (!consumer_counted_[vertex])
    return;
  consumer_counted_[vertex] = false;
  for (std::uint32_t g : graph_.vertices()[vertex].consumed_partition_groups) {
    if (!is_cross_region_group(g))
      continue;
    if (finished_consumers_of_group_[g]-- == consumers_of_group_[g]) {
      const auto& group = graph_.consumed_partition_groups()[g];
      for (std::uint32_t i = 0; i < group.size; ++i)
        --done_groups_of_partition_[group.first_partition + i];
    }
  }
}

std::vector<graph::execution_attempt_id> scheduler::reconcile_deployments(
  const cluster::resource_id& task_manager,
  const std::vector<graph::execution_attempt_id>& deployed) {
  std::set<graph::execution_attempt_id> reported(deployed.begin(), deployed.end());
  std::vector<graph::execution_attempt_id> unknown;
  for (const auto& attempt : deployed) {
    auto v = vertex_of(attempt);
    if (!v || is_terminal(graph_.vertices()[*v].current_execution.state()))
      unknown.push_back(attempt);
  }
  // Missing: failed one by one (a failure may restart others, so the set is taken first).
  std::vector<graph::execution_attempt_id> missing;
  for (std::uint32_t v = 0; v < graph_.vertices().size(); ++v) {
    // Only a deployed attempt can be missing: a restarted one waiting for its slot (CREATED,
    // SCHEDULED) still has its predecessor's deployed_to_.
    auto state = graph_.vertices()[v].current_execution.state();
    bool deployed = state == execution_state::deploying || state == execution_state::initializing
      || state == execution_state::running || state == execution_state::canceling;
    if (!deployed || !deployment_confirmed_[v] || !deployed_to_[v]
        || deployed_to_[v]->location.id != task_manager)
      continue;
    auto attempt = graph_.attempt_id(v);
    if (reported.count(attempt) == 0)
      missing.push_back(attempt);
  }
  for (const auto& attempt : missing) {
    auto v = vertex_of(attempt);
    if (!v || is_terminal(graph_.vertices()[*v].current_execution.state()))
      continue;
    log_info("Failing deployment " + attempt.to_string() + " due to no longer being deployed.");
    (void)update_task_execution_state(cluster::task_execution_state{
      graph_.job_graph().job_id, attempt, execution_state::failed,
      "Execution " + attempt.to_string() + " is unexpectedly no longer running on task executor "
        + task_manager + "."});
  }
  return unknown;
}

std::vector<std::pair<slot_pool::slot_request_id, std::chrono::nanoseconds>>
scheduler::pending_slot_requests() const {
  std::vector<std::pair<slot_pool::slot_request_id, std::chrono::nanoseconds>> pending;
  auto t = now();
  for (const auto& [key, shared] : shared_slots_)
    if (!shared.slot)
      pending.emplace_back(shared.request, t - shared.requested_at);
  return pending;
}

} // namespace flint::job_master
