#include "runtime/actors/resource_manager/slot_manager.hpp"

#include <algorithm>

namespace flint::resource_manager {

const char* to_string(slot_state s) {
  switch (s) {
    case slot_state::free: return "FREE";
    case slot_state::pending: return "PENDING";
    case slot_state::allocated: return "ALLOCATED";
  }
  return "?";
}

namespace {

std::string millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

} // namespace

slot_manager::slot_manager(slot_manager_config config, heartbeat::main_thread_executor& executor,
                           slot_manager_actions& actions)
  : config_(config),
    executor_(executor),
    actions_(actions) {}

slot_manager::~slot_manager() = default;

// -- task managers ------------------------------------------------------------------------------

bool slot_manager::register_task_manager(const cluster::instance_id& instance,
                                         const cluster::resource_id& task_manager,
                                         const cluster::slot_report& report) {
  if (task_managers_.contains(instance)) {
    report_slot_status(instance, report);
    return false;
  }
  auto& reg = task_managers_[instance];
  reg.instance = instance;
  reg.task_manager = task_manager;
  for (const auto& status : report.slots)
    add_slot(reg, status);
  check_idle(instance);
  return true;
}

expected<std::vector<removed_allocation>> slot_manager::unregister_task_manager(
  const cluster::instance_id& instance) {
  auto i = task_managers_.find(instance);
  if (i == task_managers_.end())
    return make_error(errc::not_found,
                      "no TaskExecutor registered with instance id " + instance.to_string());
  auto slots = std::move(i->second.slots);
  task_managers_.erase(i);
  std::vector<removed_allocation> lost;
  for (const auto& id : slots)
    remove_slot(id, &lost);
  return lost;
}

bool slot_manager::report_slot_status(const cluster::instance_id& instance,
                                      const cluster::slot_report& report) {
  auto* reg = find_registration(instance);
  if (reg == nullptr)
    return false;
  for (const auto& status : report.slots) {
    auto i = slots_.find(status.id);
    if (i == slots_.end()) {
      add_slot(*reg, status);
      continue;
    }
    if (i->second.instance != instance)
      continue; // a slot id of another TaskExecutor: not this report's to change
    update_slot(i->second, status);
  }
  check_idle(instance);
  return true;
}

// -- slot requests ------------------------------------------------------------------------------

bool slot_manager::register_slot_request(const slot_request& request) {
  if (pending_index_.contains(request.allocation_id) || slot_of(request.allocation_id) != nullptr)
    return false;
  auto seq = next_seq_++;
  auto& p = pending_[seq];
  p.request = request;
  p.seq = seq;
  pending_index_[request.allocation_id] = seq;
  executor_.schedule(
    [weak = std::weak_ptr<int>(alive_), this, allocation = request.allocation_id, seq] {
      if (weak.lock())
        timeout_request(allocation, seq);
    },
    config_.slot_request_timeout);
  internal_request_slot(p);
  return true;
}

bool slot_manager::unregister_slot_request(const cluster::allocation_id& allocation) {
  auto* p = find_pending(allocation);
  if (p == nullptr)
    return false;
  auto assigned = p->assigned;
  pending_.erase(p->seq);
  pending_index_.erase(allocation);
  if (assigned) {
    // The TaskExecutor may still allocate it; its next slot report tells.
    if (auto s = slots_.find(*assigned);
        s != slots_.end() && s->second.state == slot_state::pending) {
      handle_free_slot(s->second);
      check_idle(s->second.instance);
    }
  }
  return true;
}

std::size_t slot_manager::unregister_job(const graph::job_id& job) {
  std::vector<cluster::allocation_id> drop;
  for (const auto& [seq, p] : pending_)
    if (p.request.job_id == job)
      drop.push_back(p.request.allocation_id);
  for (const auto& a : drop)
    unregister_slot_request(a);
  return drop.size();
}

void slot_manager::complete_allocation(const cluster::allocation_id& allocation,
                                       const cluster::slot_id& slot_id,
                                       const expected<unit>& result) {
  auto* p = find_pending(allocation);
  if (p == nullptr || p->assigned != slot_id)
    return;
  auto s = slots_.find(slot_id);
  if (s == slots_.end())
    return;
  auto& slot = s->second;
  if (result) {
    complete_pending(allocation, slot, p->request.job_id);
    return;
  }
  // Flink's handleFailedSlotRequest: the request goes back to pending and is retried.
  p->assigned.reset();
  if (result.error().code == errc::rejected) {
    // Occupied by an allocation we do not know yet (SlotOccupiedException); the TaskExecutor's
    // next slot report names it.
    slot.state = slot_state::allocated;
    slot.allocation.reset();
    slot.job.reset();
  } else {
    // The freed slot serves the oldest pending request, which may be this one again.
    handle_free_slot(slot);
  }
  if (!p->assigned)
    internal_request_slot(*p);
  check_idle(slot.instance);
}

bool slot_manager::free_slot(const cluster::slot_id& slot_id,
                             const cluster::allocation_id& allocation) {
  auto s = slots_.find(slot_id);
  if (s == slots_.end())
    return false;
  auto& slot = s->second;
  if (slot.state != slot_state::allocated || (slot.allocation && *slot.allocation != allocation))
    return false;
  handle_free_slot(slot);
  check_idle(slot.instance);
  return true;
}

void slot_manager::clear() {
  alive_ = std::make_shared<int>(0);
  task_managers_.clear();
  slots_.clear();
  free_slots_.clear();
  free_index_.clear();
  pending_.clear();
  pending_index_.clear();
}

// -- inspection ---------------------------------------------------------------------------------

std::size_t slot_manager::number_of_free_slots_of(const cluster::instance_id& instance) const {
  std::size_t n = 0;
  for (const auto& [seq, id] : free_slots_)
    if (slots_.at(id).instance == instance)
      ++n;
  return n;
}

std::size_t slot_manager::number_of_slots_of(const cluster::instance_id& instance) const {
  auto i = task_managers_.find(instance);
  return i == task_managers_.end() ? 0 : i->second.slots.size();
}

bool slot_manager::is_registered(const cluster::instance_id& instance) const {
  return task_managers_.contains(instance);
}

std::size_t slot_manager::number_of_required_slots(const graph::job_id& job) const {
  std::size_t n = 0;
  for (const auto& [seq, p] : pending_)
    n += p.request.job_id == job ? 1 : 0;
  // A pending slot is assigned to one of the requests counted above.
  for (const auto& [id, s] : slots_)
    n += s.state == slot_state::allocated && s.job == job ? 1 : 0;
  return n;
}

bool slot_manager::is_pending(const cluster::allocation_id& allocation) const {
  return pending_index_.contains(allocation);
}

std::optional<cluster::slot_id> slot_manager::assigned_slot(
  const cluster::allocation_id& allocation) const {
  auto i = pending_index_.find(allocation);
  if (i == pending_index_.end())
    return std::nullopt;
  return pending_.at(i->second).assigned;
}

const task_manager_slot* slot_manager::slot(const cluster::slot_id& id) const {
  auto i = slots_.find(id);
  return i == slots_.end() ? nullptr : &i->second;
}

const task_manager_slot* slot_manager::slot_of(const cluster::allocation_id& allocation) const {
  for (const auto& [id, s] : slots_)
    if (s.state == slot_state::allocated && s.allocation == allocation)
      return &s;
  return nullptr;
}

std::vector<cluster::slot_id> slot_manager::free_slots() const {
  std::vector<cluster::slot_id> out;
  out.reserve(free_slots_.size());
  for (const auto& [seq, id] : free_slots_)
    out.push_back(id);
  return out;
}

std::optional<heartbeat::time_point> slot_manager::idle_since(
  const cluster::instance_id& instance) const {
  auto i = task_managers_.find(instance);
  if (i == task_managers_.end())
    return std::nullopt;
  return i->second.idle_since;
}

// -- internals ----------------------------------------------------------------------------------

void slot_manager::add_slot(registration& reg, const cluster::slot_status& status) {
  if (slots_.contains(status.id)) {
    // The slot moved to this TaskExecutor (re-registered under a new instance): drop the old one.
    remove_slot(status.id, nullptr);
    for (auto& [instance, other] : task_managers_)
      std::erase(other.slots, status.id);
  }
  reg.slots.push_back(status.id);
  auto& s = slots_[status.id];
  s.id = status.id;
  s.profile = status.profile;
  s.instance = reg.instance;
  if (status.allocation) {
    s.state = slot_state::allocated;
    s.allocation = status.allocation;
    s.job = status.job;
    if (find_pending(*status.allocation) != nullptr)
      complete_pending(*status.allocation, s, status.job);
  } else {
    s.state = slot_state::free;
    handle_free_slot(s);
  }
}

void slot_manager::remove_slot(const cluster::slot_id& id, std::vector<removed_allocation>* lost) {
  auto i = slots_.find(id);
  if (i == slots_.end())
    return;
  auto slot = i->second;
  unmark_free(id);
  slots_.erase(i);
  if (slot.state == slot_state::allocated && slot.allocation && lost != nullptr)
    lost->push_back(removed_allocation{slot.id, *slot.allocation, slot.job});
  if (slot.state == slot_state::pending && slot.allocation)
    retry_pending(*slot.allocation);
}

void slot_manager::update_slot(task_manager_slot& s, const cluster::slot_status& status) {
  s.profile = status.profile;
  if (status.allocation) {
    const auto& reported = *status.allocation;
    switch (s.state) {
      case slot_state::free:
        unmark_free(s.id);
        s.state = slot_state::allocated;
        s.allocation = reported;
        s.job = status.job;
        if (find_pending(reported) != nullptr)
          complete_pending(reported, s, status.job);
        break;
      case slot_state::pending:
        if (s.allocation == reported) {
          complete_pending(reported, s, status.job);
        } else {
          // Taken by another allocation while ours was in flight: retry ours elsewhere.
          auto ours = s.allocation;
          s.state = slot_state::allocated;
          s.allocation = reported;
          s.job = status.job;
          if (ours)
            retry_pending(*ours);
        }
        break;
      case slot_state::allocated:
        s.allocation = reported;
        s.job = status.job;
        break;
    }
  } else if (s.state == slot_state::allocated) {
    handle_free_slot(s);
  }
  // A pending slot reported free: the allocation is still in flight; keep waiting for it.
}

void slot_manager::handle_free_slot(task_manager_slot& s) {
  s.state = slot_state::free;
  s.allocation.reset();
  s.job.reset();
  for (auto& [seq, p] : pending_) {
    if (!p.assigned && s.profile.is_matching(p.request.profile)) {
      assign(s, p);
      return;
    }
  }
  mark_free(s);
}

void slot_manager::mark_free(task_manager_slot& s) {
  if (free_index_.contains(s.id))
    return;
  auto seq = next_seq_++;
  free_slots_[seq] = s.id;
  free_index_[s.id] = seq;
}

void slot_manager::unmark_free(const cluster::slot_id& id) {
  auto i = free_index_.find(id);
  if (i == free_index_.end())
    return;
  free_slots_.erase(i->second);
  free_index_.erase(i);
}

void slot_manager::internal_request_slot(pending_request& p) {
  for (auto& [seq, id] : free_slots_) {
    auto& s = slots_.at(id);
    if (s.profile.is_matching(p.request.profile)) {
      unmark_free(s.id);
      assign(s, p);
      return;
    }
  }
  // No free slot: the request waits (a standalone cluster starts no new TaskExecutors).
}

void slot_manager::assign(task_manager_slot& s, pending_request& p) {
  s.state = slot_state::pending;
  s.allocation = p.request.allocation_id;
  s.job = p.request.job_id;
  p.assigned = s.id;
  auto instance = s.instance;
  auto slot_id = s.id;
  auto request = p.request;
  check_idle(instance);
  const auto* reg = find_registration(instance);
  actions_.allocate_slot(instance, reg != nullptr ? reg->task_manager : cluster::resource_id{},
                         slot_id, request);
}

void slot_manager::complete_pending(const cluster::allocation_id& allocation, task_manager_slot& s,
                                    const std::optional<graph::job_id>& job) {
  if (auto i = pending_index_.find(allocation); i != pending_index_.end()) {
    pending_.erase(i->second);
    pending_index_.erase(i);
  }
  s.state = slot_state::allocated;
  s.allocation = allocation;
  s.job = job;
}

void slot_manager::retry_pending(const cluster::allocation_id& allocation) {
  auto* p = find_pending(allocation);
  if (p == nullptr)
    return;
  p->assigned.reset();
  internal_request_slot(*p);
}

void slot_manager::timeout_request(const cluster::allocation_id& allocation, std::uint64_t seq) {
  auto i = pending_index_.find(allocation);
  if (i == pending_index_.end() || i->second != seq)
    return;
  auto request = pending_.at(seq).request;
  unregister_slot_request(allocation);
  actions_.notify_allocation_failure(
    request.job_id, allocation, request.target_address,
    make_error(errc::timeout,
               "Slot request with allocation id " + allocation.to_string() + " for job "
                 + request.job_id.to_string() + " timed out after "
                 + millis(config_.slot_request_timeout)
                 + " (slot.request.timeout): no matching slot became available."));
}

void slot_manager::check_idle(const cluster::instance_id& instance) {
  auto* reg = find_registration(instance);
  if (reg == nullptr)
    return;
  bool idle = std::all_of(reg->slots.begin(), reg->slots.end(), [this](const cluster::slot_id& id) {
    auto i = slots_.find(id);
    return i == slots_.end() || i->second.state == slot_state::free;
  });
  if (idle == reg->idle_since.has_value())
    return;
  ++reg->idle_generation;
  if (!idle) {
    reg->idle_since.reset();
    return;
  }
  reg->idle_since = executor_.now();
  executor_.schedule(
    [weak = std::weak_ptr<int>(alive_), this, instance, generation = reg->idle_generation] {
      if (weak.lock())
        timeout_idle(instance, generation);
    },
    config_.task_manager_timeout);
}

void slot_manager::timeout_idle(const cluster::instance_id& instance, std::uint64_t generation) {
  auto* reg = find_registration(instance);
  if (reg == nullptr || reg->idle_generation != generation || !reg->idle_since)
    return;
  actions_.release_resource(instance, reg->task_manager, "TaskExecutor exceeded the idle timeout.");
}

slot_manager::pending_request* slot_manager::find_pending(
  const cluster::allocation_id& allocation) {
  auto i = pending_index_.find(allocation);
  return i == pending_index_.end() ? nullptr : &pending_.at(i->second);
}

slot_manager::registration* slot_manager::find_registration(const cluster::instance_id& instance) {
  auto i = task_managers_.find(instance);
  return i == task_managers_.end() ? nullptr : &i->second;
}

} // namespace flint::resource_manager
