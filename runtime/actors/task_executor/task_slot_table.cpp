#include "runtime/actors/task_executor/task_slot_table.hpp"

#include <algorithm>

namespace flint::task_executor {

const char* to_string(task_slot_state s) {
  switch (s) {
    case task_slot_state::free: return "FREE";
    case task_slot_state::allocated: return "ALLOCATED";
    case task_slot_state::active: return "ACTIVE";
    case task_slot_state::releasing: return "RELEASING";
  }
  return "?";
}

task_slot_table::task_slot_table(cluster::resource_id owner, std::int32_t number_of_slots,
                                 cluster::resource_profile default_profile)
  : owner_(std::move(owner)),
    default_profile_(default_profile) {
  slots_.resize(static_cast<std::size_t>(std::max(number_of_slots, 0)));
  for (std::int32_t i = 0; i < number_of_slots; ++i) {
    slots_[i].index = i;
    slots_[i].profile = default_profile_;
  }
}

expected<unit> task_slot_table::allocate_slot(std::int32_t index, const graph::job_id& job,
                                              const cluster::allocation_id& allocation,
                                              const cluster::resource_profile& profile) {
  if (index < 0 || index >= number_of_slots())
    return make_error(errc::invalid_argument,
                      "TaskExecutor " + owner_ + " has no slot " + std::to_string(index)
                        + " (it has " + std::to_string(number_of_slots()) + " slots)");
  auto& s = slots_[index];
  if (s.state != task_slot_state::free) {
    if (s.allocation == allocation && s.job == job)
      return unit{};
    return make_error(errc::rejected,
                      "The slot " + owner_ + "_" + std::to_string(index)
                        + " has already been allocated for a different job "
                        + (s.job ? s.job->to_string() : "?") + " under allocation "
                        + (s.allocation ? s.allocation->to_string() : "?") + ".");
  }
  if (auto other = by_allocation_.find(allocation); other != by_allocation_.end())
    return make_error(errc::rejected,
                      "Could not allocate slot " + std::to_string(index) + ": allocation "
                        + allocation.to_string() + " already holds slot "
                        + std::to_string(other->second) + ".");
  s.state = task_slot_state::allocated;
  s.job = job;
  s.allocation = allocation;
  s.profile = profile.is_unknown() ? default_profile_ : profile;
  by_allocation_[allocation] = index;
  return unit{};
}

expected<bool> task_slot_table::mark_slot_active(const cluster::allocation_id& allocation) {
  auto* s = find(allocation);
  if (s == nullptr)
    return make_error(errc::not_found, "no slot allocated under " + allocation.to_string());
  switch (s->state) {
    case task_slot_state::allocated: s->state = task_slot_state::active; return true;
    case task_slot_state::active: return false;
    default:
      return make_error(errc::illegal_state,
                        "slot " + std::to_string(s->index) + " is " + to_string(s->state)
                          + ", cannot mark it active");
  }
}

expected<bool> task_slot_table::mark_slot_inactive(const cluster::allocation_id& allocation) {
  auto* s = find(allocation);
  if (s == nullptr)
    return make_error(errc::not_found, "no slot allocated under " + allocation.to_string());
  switch (s->state) {
    case task_slot_state::active: s->state = task_slot_state::allocated; return true;
    case task_slot_state::allocated: return false;
    default:
      return make_error(errc::illegal_state,
                        "slot " + std::to_string(s->index) + " is " + to_string(s->state)
                          + ", cannot mark it inactive");
  }
}

bool task_slot_table::try_mark_slot_active(const graph::job_id& job,
                                           const cluster::allocation_id& allocation) {
  auto* s = find(allocation);
  if (s == nullptr || s->job != job)
    return false;
  auto r = mark_slot_active(allocation);
  return r.has_value();
}

expected<std::optional<std::int32_t>> task_slot_table::free_slot(
  const cluster::allocation_id& allocation) {
  auto* s = find(allocation);
  if (s == nullptr)
    return make_error(
      errc::not_found,
      "TaskExecutor " + owner_ + " has no slot allocated under " + allocation.to_string());
  if (!s->tasks.empty()) {
    s->state = task_slot_state::releasing;
    return std::optional<std::int32_t>{};
  }
  auto index = s->index;
  reset(*s);
  return std::optional<std::int32_t>{index};
}

expected<unit> task_slot_table::add_task(const graph::execution_attempt_id& attempt,
                                         const graph::job_id& job,
                                         const cluster::allocation_id& allocation) {
  auto* s = find(allocation);
  if (s == nullptr)
    return make_error(errc::not_found,
                      "No task slot allocated for job ID " + job.to_string() + " and allocation ID "
                        + allocation.to_string() + ".");
  if (s->job != job || s->state != task_slot_state::active)
    return make_error(errc::illegal_state,
                      "The task slot of allocation " + allocation.to_string()
                        + " is not active for job " + job.to_string() + " (state "
                        + to_string(s->state) + ").");
  if (tasks_.contains(attempt))
    return make_error(errc::rejected, "Task " + attempt.to_string() + " is already registered.");
  s->tasks.insert(attempt);
  tasks_[attempt] = allocation;
  return unit{};
}

std::optional<task_slot_table::removed_task> task_slot_table::remove_task(
  const graph::execution_attempt_id& attempt) {
  auto i = tasks_.find(attempt);
  if (i == tasks_.end())
    return std::nullopt;
  removed_task out{i->second, std::nullopt};
  tasks_.erase(i);
  if (auto* s = find(out.allocation)) {
    s->tasks.erase(attempt);
    if (s->tasks.empty() && s->state == task_slot_state::releasing) {
      out.freed_slot = s->index;
      reset(*s);
    }
  }
  return out;
}

const task_slot* task_slot_table::slot(std::int32_t index) const {
  if (index < 0 || index >= number_of_slots())
    return nullptr;
  return &slots_[index];
}

const task_slot* task_slot_table::slot_of(const cluster::allocation_id& allocation) const {
  auto i = by_allocation_.find(allocation);
  return i == by_allocation_.end() ? nullptr : &slots_[i->second];
}

bool task_slot_table::is_slot_free(std::int32_t index) const {
  const auto* s = slot(index);
  return s != nullptr && s->state == task_slot_state::free;
}

bool task_slot_table::is_allocated(std::int32_t index, const graph::job_id& job,
                                   const cluster::allocation_id& allocation) const {
  const auto* s = slot(index);
  return s != nullptr && s->state != task_slot_state::free && s->job == job
    && s->allocation == allocation;
}

bool task_slot_table::has_allocated_slots(const graph::job_id& job) const {
  for (const auto& s : slots_)
    if (s.state != task_slot_state::free && s.job == job)
      return true;
  return false;
}

std::vector<cluster::allocation_id> task_slot_table::allocations_of(
  const graph::job_id& job) const {
  std::vector<cluster::allocation_id> out;
  for (const auto& s : slots_)
    if (s.state != task_slot_state::free && s.job == job)
      out.push_back(*s.allocation);
  return out;
}

std::vector<cluster::slot_offer> task_slot_table::offers_for(const graph::job_id& job) const {
  std::vector<cluster::slot_offer> out;
  for (const auto& s : slots_)
    if (s.state == task_slot_state::allocated && s.job == job)
      out.push_back(cluster::slot_offer{*s.allocation, s.index, s.profile});
  return out;
}

std::vector<graph::execution_attempt_id> task_slot_table::tasks_of(
  const cluster::allocation_id& allocation) const {
  const auto* s = slot_of(allocation);
  if (s == nullptr)
    return {};
  return {s->tasks.begin(), s->tasks.end()};
}

std::optional<cluster::allocation_id> task_slot_table::allocation_of_task(
  const graph::execution_attempt_id& attempt) const {
  auto i = tasks_.find(attempt);
  if (i == tasks_.end())
    return std::nullopt;
  return i->second;
}

std::size_t task_slot_table::number_of_free_slots() const {
  std::size_t n = 0;
  for (const auto& s : slots_)
    if (s.state == task_slot_state::free)
      ++n;
  return n;
}

cluster::slot_report task_slot_table::create_slot_report() const {
  cluster::slot_report report;
  report.slots.reserve(slots_.size());
  for (const auto& s : slots_) {
    cluster::slot_status status;
    status.id = cluster::slot_id{owner_, s.index};
    status.profile = s.profile;
    if (s.state != task_slot_state::free) {
      status.allocation = s.allocation;
      status.job = s.job;
    }
    report.slots.push_back(std::move(status));
  }
  return report;
}

task_slot* task_slot_table::find(const cluster::allocation_id& allocation) {
  auto i = by_allocation_.find(allocation);
  return i == by_allocation_.end() ? nullptr : &slots_[i->second];
}

void task_slot_table::reset(task_slot& s) {
  if (s.allocation)
    by_allocation_.erase(*s.allocation);
  for (const auto& t : s.tasks)
    tasks_.erase(t);
  s.tasks.clear();
  s.state = task_slot_state::free;
  s.job.reset();
  s.allocation.reset();
  s.profile = default_profile_;
}

} // namespace flint::task_executor
