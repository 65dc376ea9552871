#include "runtime/actors/resource_manager/resource_manager_state.hpp"

#include <set>

namespace flint::resource_manager {

resource_manager_state::resource_manager_state(std::uint64_t seed) : rng_(seed) {}

// -- leadership ---------------------------------------------------------------------------------

std::uint64_t resource_manager_state::start_leading(const slot_manager_config& config,
                                                    heartbeat::main_thread_executor& executor,
                                                    slot_manager_actions& actions) {
  slots_.emplace(config, executor, actions);
  return ++epoch_;
}

void resource_manager_state::stop_leading() {
  ++epoch_;
  slots_.reset();
  task_executors_.clear();
  by_instance_.clear();
  job_managers_.clear();
}

// -- task executors -----------------------------------------------------------------------------

resource_manager_state::task_executor_registered resource_manager_state::register_task_executor(
  const task_executor_registration_request& req, caf::actor handle) {
  task_executor_registered out;
  if (!slots_)
    return out;
  if (auto old = task_executors_.find(req.resource_id); old != task_executors_.end()) {
    (void)slots_->unregister_task_manager(old->second.instance);
    by_instance_.erase(old->second.instance);
    task_executors_.erase(old);
    out.replaced = true;
  }
  out.instance = cluster::instance_id{rng_(), rng_()};
  task_executors_[req.resource_id] =
    task_executor_registration{req.resource_id,   out.instance,  req.task_executor_address,
                               std::move(handle), req.data_port, false};
  by_instance_[out.instance] = req.resource_id;
  return out;
}

void resource_manager_state::apply_slot_report(task_executor_registration& reg,
                                               const cluster::slot_report& report) {
  if (!slots_)
    return;
  if (reg.reported)
    slots_->report_slot_status(reg.instance, report);
  else if (slots_->register_task_manager(reg.instance, reg.id, report))
    reg.reported = true;
}

expected<unit> resource_manager_state::report_slots(const cluster::resource_id& id,
                                                    const cluster::instance_id& registration,
                                                    const cluster::slot_report& report) {
  auto i = task_executors_.find(id);
  if (i == task_executors_.end() || i->second.instance != registration)
    return make_error(
      errc::not_found,
      "Unknown TaskManager registration id " + registration.to_string() + " of " + id + ".");
  apply_slot_report(i->second, report);
  return unit{};
}

void resource_manager_state::heartbeat_slot_report(const cluster::resource_id& id,
                                                   const cluster::slot_report& report) {
  if (auto i = task_executors_.find(id); i != task_executors_.end())
    apply_slot_report(i->second, report);
}

expected<unit> resource_manager_state::notify_slot_available(
  const cluster::instance_id& registration, const cluster::slot_id& slot,
  const cluster::allocation_id& allocation) {
  const auto* reg = task_executor_by_instance(registration);
  if (reg == nullptr || reg->id != slot.owner || !slots_)
    return make_error(errc::not_found,
                      "Unknown TaskManager registration id " + registration.to_string()
                        + " for slot " + slot.to_string() + ".");
  slots_->free_slot(slot, allocation);
  return unit{};
}

std::optional<resource_manager_state::closed_task_executor>
resource_manager_state::close_task_manager_connection(const cluster::resource_id& id) {
  auto i = task_executors_.find(id);
  if (i == task_executors_.end())
    return std::nullopt;
  closed_task_executor out{i->second, {}};
  task_executors_.erase(i);
  by_instance_.erase(out.registration.instance);
  std::set<graph::job_id> affected;
  if (slots_) {
    // Requests assigned there are retried elsewhere from in here: the TaskExecutor is gone first.
    if (auto lost = slots_->unregister_task_manager(out.registration.instance))
      for (const auto& a : *lost)
        if (a.job)
          affected.insert(*a.job);
  }
  for (const auto& job : affected)
    if (const auto* jm = job_manager(job))
      out.job_managers.push_back(*jm);
  return out;
}

const task_executor_registration* resource_manager_state::task_executor(
  const cluster::resource_id& id) const {
  auto i = task_executors_.find(id);
  return i == task_executors_.end() ? nullptr : &i->second;
}

const task_executor_registration* resource_manager_state::task_executor_by_instance(
  const cluster::instance_id& instance) const {
  auto i = by_instance_.find(instance);
  return i == by_instance_.end() ? nullptr : task_executor(i->second);
}

std::optional<cluster::resource_id> resource_manager_state::task_executor_of(
  const caf::actor_addr& handle) const {
  for (const auto& [id, reg] : task_executors_)
    if (reg.handle.address() == handle)
      return id;
  return std::nullopt;
}

const task_executor_registration* resource_manager_state::allocation_target(
  const cluster::instance_id& instance, const cluster::resource_id& task_manager) const {
  const auto* reg = task_executor(task_manager);
  return reg != nullptr && reg->instance == instance ? reg : nullptr;
}

// -- job managers -------------------------------------------------------------------------------

resource_manager_state::job_manager_registered resource_manager_state::register_job_manager(
  job_manager_registration registration) {
  job_manager_registered out;
  if (!slots_)
    return out;
  auto job = registration.job;
  if (auto old = job_managers_.find(job); old != job_managers_.end()) {
    out.previous = old->second;
    if (old->second.job_master_id != registration.job_master_id) {
      close_job_manager_connection(job);
      out.previous_closed = true;
    } else {
      job_managers_.erase(old);
    }
  }
  job_managers_[job] = std::move(registration);
  return out;
}

expected<unit> resource_manager_state::check_slot_request(const graph::job_id& job,
                                                          const cluster::job_master_id& id) const {
  const auto* jm = job_manager(job);
  if (jm == nullptr)
    return make_error(errc::not_found,
                      "Could not find registered job manager for job " + job.to_string() + ".");
  if (jm->job_master_id != id)
    return make_error(errc::rejected,
                      "The job leader's id " + jm->job_master_id.to_string()
                        + " does not match the received id " + id.to_string() + ".");
  return unit{};
}

bool resource_manager_state::register_slot_request(const slot_request& request) {
  return slots_ && slots_->register_slot_request(request);
}

bool resource_manager_state::cancel_slot_request(const cluster::allocation_id& allocation) {
  return slots_ && slots_->unregister_slot_request(allocation);
}

std::optional<job_manager_registration> resource_manager_state::close_job_manager_connection(
  const graph::job_id& job) {
  auto i = job_managers_.find(job);
  if (i == job_managers_.end())
    return std::nullopt;
  auto out = std::move(i->second);
  job_managers_.erase(i); // `job` may live in the entry: use the copy from here on
  if (slots_)
    slots_->unregister_job(out.job);
  return out;
}

const job_manager_registration* resource_manager_state::job_manager(
  const graph::job_id& job) const {
  auto i = job_managers_.find(job);
  return i == job_managers_.end() ? nullptr : &i->second;
}

const job_manager_registration* resource_manager_state::job_manager_by_resource(
  const cluster::resource_id& id) const {
  for (const auto& [job, reg] : job_managers_)
    if (reg.resource_id == id)
      return &reg;
  return nullptr;
}

// -- slots --------------------------------------------------------------------------------------

void resource_manager_state::complete_allocation(const cluster::allocation_id& allocation,
                                                 const cluster::slot_id& slot,
                                                 const expected<unit>& result) {
  if (slots_)
    slots_->complete_allocation(allocation, slot, result);
}

resource_overview resource_manager_state::overview() const {
  resource_overview out;
  out.number_task_managers = static_cast<std::int32_t>(task_executors_.size());
  if (slots_) {
    out.number_registered_slots = static_cast<std::int32_t>(slots_->number_of_registered_slots());
    out.number_free_slots = static_cast<std::int32_t>(slots_->number_of_free_slots());
    out.number_pending_slot_requests =
      static_cast<std::int32_t>(slots_->number_of_pending_requests());
  }
  for (const auto& [id, te] : task_executors_) {
    task_manager_info info;
    info.resource_id = id;
    info.address = te.address;
    info.data_port = te.data_port;
    if (slots_) {
      info.slots_number = static_cast<std::int32_t>(slots_->number_of_slots_of(te.instance));
      info.free_slots = static_cast<std::int32_t>(slots_->number_of_free_slots_of(te.instance));
    }
    out.task_managers.push_back(std::move(info));
  }
  return out;
}

} // namespace flint::resource_manager
