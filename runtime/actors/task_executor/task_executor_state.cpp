#include "runtime/actors/task_executor/task_executor_state.hpp"

#include <algorithm>

namespace flint::task_executor {

task_executor_state::task_executor_state(cluster::resource_id resource_id,
                                         std::int32_t number_of_slots,
                                         cluster::resource_profile default_slot_profile,
                                         std::function<bool(const graph::job_id&)> holds_partitions)
  : slots_(std::move(resource_id), number_of_slots, std::move(default_slot_profile)),
    holds_partitions_(std::move(holds_partitions)) {}

rpc::fencing_token task_executor_state::expected_token(const std::string& scope) const {
  if (scope == rm_scope)
    return resource_manager_id();
  if (auto job = graph::job_id::from_string(scope))
    if (auto id = jobs_.job_master_id_of(*job))
      return *id;
  return {};
}

// -- resource manager ---------------------------------------------------------------------------

bool task_executor_state::is_current_resource_manager_leader(const leader::leader_address& address,
                                                             const rpc::fencing_token& id) const {
  return !id.is_nil() && id == rm_id_ && address.endpoint_id == rm_address_.endpoint_id;
}

void task_executor_state::set_resource_manager_leader(leader::leader_address address,
                                                      rpc::fencing_token id) {
  rm_address_ = std::move(address);
  rm_id_ = id;
}

bool task_executor_state::has_resource_manager_leader() const {
  return !rm_id_.is_nil() && !rm_address_.empty();
}

bool task_executor_state::resource_manager_registered(std::uint64_t epoch,
                                                      resource_manager_connection connection) {
  if (epoch != rm_epoch_)
    return false;
  rm_connection_ = std::move(connection);
  return true;
}

std::optional<resource_manager_connection>
task_executor_state::close_resource_manager_connection() {
  ++rm_epoch_;
  auto out = std::move(rm_connection_);
  rm_connection_.reset();
  return out;
}

cluster::resource_manager_id task_executor_state::resource_manager_id() const {
  return rm_connection_ ? rm_id_ : cluster::resource_manager_id{};
}

// -- slots --------------------------------------------------------------------------------------

expected<task_executor_state::slot_reserved> task_executor_state::request_slot(
  const request_slot_request& req) {
  if (!rm_connection_ || req.resource_manager_id != rm_id_)
    return make_error(errc::fencing_token_mismatch,
                      "TaskManager " + resource_id() + " is not connected to the resource manager "
                        + req.resource_manager_id.to_string() + ".");
  if (req.slot.owner != resource_id())
    return make_error(
      errc::invalid_argument,
      "slot " + req.slot.to_string() + " does not belong to TaskExecutor " + resource_id() + ".");
  if (auto r =
        slots_.allocate_slot(req.slot.slot_number, req.job_id, req.allocation_id, req.profile);
      !r)
    return r.error();
  slot_reserved out;
  out.awaits_acceptance = slots_.slot_of(req.allocation_id)->state == task_slot_state::allocated;
  auto [entry, created] = jobs_.get_or_create(req.job_id, req.target_address);
  out.job_manager_connected = entry->connection.has_value();
  return out;
}

expected<unit> task_executor_state::check_free_slot(
  const graph::job_id& job, const cluster::allocation_id& allocation) const {
  const auto* s = slots_.slot_of(allocation);
  if (s == nullptr)
    return make_error(errc::not_found,
                      "TaskExecutor " + resource_id() + " has no slot allocated under "
                        + allocation.to_string() + ".");
  if (s->job != job)
    return make_error(errc::rejected,
                      "The slot of allocation " + allocation.to_string()
                        + " belongs to another job than " + job.to_string() + ".");
  return unit{};
}

std::optional<freed_slot> task_executor_state::free_slot(const cluster::allocation_id& allocation) {
  const auto* s = slots_.slot_of(allocation);
  if (s == nullptr)
    return std::nullopt;
  auto job = *s->job;
  auto freed = slots_.free_slot(allocation);
  if (!freed || !freed->has_value())
    return std::nullopt;
  disarm_slot_timeout(allocation);
  return freed_slot{job, **freed, allocation};
}

bool task_executor_state::mark_slot_inactive(const cluster::allocation_id& allocation) {
  auto r = slots_.mark_slot_inactive(allocation);
  return r && *r;
}

std::vector<cluster::slot_offer> task_executor_state::accept_offers(
  const graph::job_id& job, const std::vector<cluster::slot_offer>& offers,
  const std::vector<cluster::slot_offer>& accepted) {
  std::vector<cluster::slot_offer> rejected;
  for (const auto& o : offers) {
    const auto* s = slots_.slot_of(o.allocation);
    if (s == nullptr || s->job != job)
      continue; // freed meanwhile
    bool ok = std::any_of(accepted.begin(), accepted.end(), [&](const cluster::slot_offer& a) {
      return a.allocation == o.allocation;
    });
    if (ok) {
      (void)slots_.mark_slot_active(o.allocation);
      disarm_slot_timeout(o.allocation);
    } else {
      rejected.push_back(o);
    }
  }
  return rejected;
}

std::uint64_t task_executor_state::arm_slot_timeout(const cluster::allocation_id& allocation) {
  auto ticket = ++next_slot_ticket_;
  slot_timeouts_[allocation] = ticket;
  return ticket;
}

bool task_executor_state::slot_timeout_elapsed(const cluster::allocation_id& allocation,
                                               std::uint64_t ticket) {
  auto i = slot_timeouts_.find(allocation);
  if (i == slot_timeouts_.end() || i->second != ticket)
    return false;
  slot_timeouts_.erase(i);
  return true;
}

// -- tasks --------------------------------------------------------------------------------------

expected<unit> task_executor_state::accept_task(const graph::job_id& job,
                                                const cluster::job_master_id& job_master_id,
                                                const cluster::allocation_id& allocation,
                                                const graph::execution_attempt_id& attempt) {
  const auto* entry = jobs_.get(job);
  if (entry == nullptr || !entry->connection)
    return make_error(errc::illegal_state,
                      "Could not submit task because there is no JobManager associated for the job "
                        + job.to_string() + ".");
  if (entry->connection->job_master_id != job_master_id)
    return make_error(errc::fencing_token_mismatch,
                      "Rejecting the task submission because the job manager leader id "
                        + job_master_id.to_string()
                        + " does not match the expected job manager leader id "
                        + entry->connection->job_master_id.to_string() + ".");
  if (!slots_.try_mark_slot_active(job, allocation))
    return make_error(errc::not_found,
                      "No task slot allocated for job ID " + job.to_string() + " and allocation ID "
                        + allocation.to_string() + ".");
  disarm_slot_timeout(allocation);
  return slots_.add_task(attempt, job, allocation);
}

void task_executor_state::add_task(const graph::execution_attempt_id& attempt, task_record record) {
  tasks_[attempt] = std::move(record);
}

expected<const task_record*> task_executor_state::task_of_job(
  const graph::job_id& job, const graph::execution_attempt_id& attempt) const {
  auto i = tasks_.find(attempt);
  if (i == tasks_.end() || i->second.job != job)
    return make_error(errc::not_found,
                      "Cannot find task to cancel for execution " + attempt.to_string() + " of job "
                        + job.to_string() + ".");
  return &i->second;
}

const task_record* task_executor_state::task(const graph::execution_attempt_id& attempt) const {
  auto i = tasks_.find(attempt);
  return i == tasks_.end() ? nullptr : &i->second;
}

std::vector<const task_record*> task_executor_state::tasks_of(
  const cluster::allocation_id& allocation) const {
  std::vector<const task_record*> out;
  for (const auto& attempt : slots_.tasks_of(allocation))
    if (const auto* t = task(attempt))
      out.push_back(t);
  return out;
}

std::optional<graph::execution_state> task_executor_state::switch_task_state(
  const graph::execution_attempt_id& attempt, graph::execution_state to) {
  auto i = tasks_.find(attempt);
  if (i == tasks_.end())
    return std::nullopt;
  return std::exchange(i->second.state, to);
}

std::optional<freed_slot> task_executor_state::remove_task(
  const graph::execution_attempt_id& attempt) {
  auto i = tasks_.find(attempt);
  if (i == tasks_.end())
    return std::nullopt;
  auto job = i->second.job;
  tasks_.erase(i);
  auto removed = slots_.remove_task(attempt);
  if (!removed || !removed->freed_slot)
    return std::nullopt;
  disarm_slot_timeout(removed->allocation);
  return freed_slot{job, *removed->freed_slot, removed->allocation};
}

void task_executor_state::orphan_tasks_of(const graph::job_id& job) {
  for (auto& [attempt, t] : tasks_)
    if (t.job == job)
      t.orphaned = true;
}

bool task_executor_state::has_orphaned_tasks(const graph::job_id& job) const {
  return std::any_of(tasks_.begin(), tasks_.end(), [&](const auto& entry) {
    return entry.second.job == job && entry.second.orphaned;
  });
}

// -- jobs ---------------------------------------------------------------------------------------

job_manager_connection_change task_executor_state::job_manager_gained_leadership(
  const graph::job_id& job, const cluster::job_master_id& id) const {
  const auto* entry = jobs_.get(job);
  if (entry == nullptr)
    return job_manager_connection_change::unknown_job;
  if (!entry->connection)
    return job_manager_connection_change::connect;
  return entry->connection->job_master_id == id ? job_manager_connection_change::unchanged
                                                : job_manager_connection_change::replace;
}

bool task_executor_state::is_connected_to(const graph::job_id& job,
                                          const cluster::job_master_id& id) const {
  auto current = jobs_.job_master_id_of(job);
  return current && *current == id;
}

std::vector<job_master_connection> task_executor_state::job_manager_connections() const {
  std::vector<job_master_connection> out;
  for (const auto& job : jobs_.jobs())
    if (const auto* entry = jobs_.get(job); entry != nullptr && entry->connection)
      out.push_back(*entry->connection);
  return out;
}

bool task_executor_state::holds_partitions_of(const graph::job_id& job) const {
  return holds_partitions_ && holds_partitions_(job);
}

bool task_executor_state::has_allocated_resources(const graph::job_id& job) const {
  // Blocking partitions of the job are resources too, read later by consumers of the next stage.
  return slots_.has_allocated_slots(job) || holds_partitions_of(job);
}

bool task_executor_state::remove_job_if_no_slots(const graph::job_id& job) {
  if (slots_.has_allocated_slots(job))
    return false;
  return jobs_.remove(job);
}

void task_executor_state::drop_peers() {
  jobs_ = job_table{};
  rm_connection_.reset();
  rm_address_ = leader::leader_address{};
}

} // namespace flint::task_executor
