#include "runtime/actors/slot_pool/slot_pool_state.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace flint::slot_pool {

std::string to_string(const slot_request_id& id) {
  return "SlotRequestId{" + id.to_string() + "}";
}

slot_pool_state::slot_pool_state(graph::job_id job, slot_pool_settings settings,
                                 slot_pool_actions& actions, std::shared_ptr<spdlog::logger> logger,
                                 std::uint64_t seed)
  : job_(job),
    settings_(settings),
    actions_(actions),
    logger_(std::move(logger)),
    rng_(seed) {}

void slot_pool_state::log_info(const std::string& text) const {
  if (logger_)
    logger_->info(text);
}

void slot_pool_state::log_debug(const std::string& text) const {
  if (logger_)
    logger_->debug(text);
}

// -- resource manager -----------------------------------------------------------------------------

void slot_pool_state::connect_resource_manager() {
  rm_connected_ = true;
  ++rm_epoch_;
  // Requests sent to an earlier connection are sent again under their allocation ids: a new
  // leader does not know them, and the same ResourceManager ignores a request it already has.
  std::vector<slot_request_id> resend;
  for (auto& [id, req] : pending_)
    if (req.sent_epoch < rm_epoch_)
      resend.push_back(id);
  for (auto& id : resend) {
    auto req = std::move(pending_.at(id));
    pending_.erase(id);
    request_from_resource_manager(std::move(req));
  }
  auto parked = std::move(waiting_);
  waiting_.clear();
  for (auto& req : parked)
    request_from_resource_manager(std::move(req));
}

void slot_pool_state::disconnect_resource_manager() {
  rm_connected_ = false;
}

void slot_pool_state::request_from_resource_manager(pending_request req) {
  if (!req.allocation)
    req.allocation = cluster::allocation_id{rng_(), rng_()};
  auto allocation = *req.allocation;
  req.sent_epoch = rm_epoch_;
  log_info("Requesting new slot [" + to_string(req.id) + "] and profile " + req.profile.to_string()
           + " from resource manager.");
  auto id = req.id;
  auto profile = req.profile;
  pending_by_allocation_[allocation] = id;
  pending_[id] = std::move(req);
  actions_.request_slot_from_resource_manager(id, allocation, profile);
}

void slot_pool_state::resource_manager_request_failed(const slot_request_id& request,
                                                      const cluster::allocation_id& allocation,
                                                      const error& cause) {
  auto i = pending_.find(request);
  if (i == pending_.end() || i->second.allocation != allocation)
    return;
  pending_by_allocation_.erase(allocation);
  pending_.erase(i);
  actions_.complete_request(
    request,
    make_error(cause.code,
               "No pooled slot available and request to ResourceManager for "
               "new slot failed: "
                 + cause.message));
}

// -- requests ---------------------------------------------------------------------------------------

std::uint64_t slot_pool_state::allocate(const slot_request_id& request,
                                        const cluster::resource_profile& profile, bool allow_queued,
                                        time_point now) {
  (void)now;
  bool known = pending_.count(request) != 0 || allocated_by_request_.count(request) != 0
    || std::any_of(waiting_.begin(), waiting_.end(),
                   [&](const pending_request& p) { return p.id == request; });
  if (known) {
    actions_.complete_request(
      request,
      make_error(errc::invalid_argument,
                 "slot request " + to_string(request) + " is already known to the SlotPool"));
    return 0;
  }
  // An available slot first: the oldest that fits.
  slot_entry* best = nullptr;
  for (auto& [allocation, entry] : slots_)
    if (!entry.user && entry.profile.is_matching(profile)
        && (best == nullptr || entry.order < best->order))
      best = &entry;
  if (best != nullptr) {
    allocate_to(*best, request);
    return 0;
  }
  if (!allow_queued) {
    actions_.complete_request(request,
                              make_error(errc::rejected,
                                         "Could not allocate a slot for " + to_string(request)
                                           + ": no slot available and queued scheduling "
                                             "is not allowed"));
    return 0;
  }
  pending_request req{request, profile, std::nullopt, next_generation_++};
  auto generation = req.generation;
  if (rm_connected_) {
    request_from_resource_manager(std::move(req));
  } else {
    log_info("Cannot serve slot request, no ResourceManager connected. Adding as pending request ["
             + to_string(request) + "]");
    waiting_.push_back(std::move(req));
  }
  return generation;
}

void slot_pool_state::check_request_timeout(const slot_request_id& request,
                                            std::uint64_t generation) {
  if (auto i = pending_.find(request); i != pending_.end() && i->second.generation == generation) {
    auto allocation = *i->second.allocation;
    pending_by_allocation_.erase(allocation);
    pending_.erase(i);
    actions_.cancel_slot_request_at_resource_manager(allocation);
  } else if (auto w = std::find_if(waiting_.begin(), waiting_.end(),
                                   [&](const pending_request& p) {
                                     return p.id == request && p.generation == generation;
                                   });
             w != waiting_.end()) {
    waiting_.erase(w);
  } else {
    return;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.slot_request_timeout);
  log_info("Pending slot request [" + to_string(request) + "] timed out.");
  actions_.complete_request(
    request,
    make_error(errc::timeout,
               "Could not allocate the required slot within slot request timeout of "
                 + std::to_string(ms.count()) + " ms for " + to_string(request) + " of job "
                 + job_.to_string()
                 + ": no TaskExecutor offered a matching slot (the job may need more "
                   "slots than the cluster has)."));
}

void slot_pool_state::release(const slot_request_id& request, const std::string& cause,
                              time_point now) {
  if (auto a = allocated_by_request_.find(request); a != allocated_by_request_.end()) {
    auto allocation = a->second;
    allocated_by_request_.erase(a);
    auto s = slots_.find(allocation);
    if (s == slots_.end())
      return;
    s->second.user.reset();
    log_debug("Releasing slot [" + to_string(request) + "] because: " + cause);
    fulfill_or_make_available(s->second, now);
    return;
  }
  if (auto i = pending_.find(request); i != pending_.end()) {
    auto allocation = *i->second.allocation;
    pending_by_allocation_.erase(allocation);
    pending_.erase(i);
    actions_.cancel_slot_request_at_resource_manager(allocation);
    fail(
      request,
      make_error(errc::rejected, "Slot request " + to_string(request) + " was released: " + cause));
    return;
  }
  if (auto w = std::find_if(waiting_.begin(), waiting_.end(),
                            [&](const pending_request& p) { return p.id == request; });
      w != waiting_.end()) {
    waiting_.erase(w);
    fail(
      request,
      make_error(errc::rejected, "Slot request " + to_string(request) + " was released: " + cause));
  }
}

void slot_pool_state::fail(const slot_request_id& request, error cause) {
  actions_.complete_request(request, std::move(cause));
}

void slot_pool_state::allocate_to(slot_entry& entry, const slot_request_id& request) {
  entry.user = request;
  allocated_by_request_[request] = entry.slot.allocation_id;
  actions_.complete_request(request, entry.slot);
}

void slot_pool_state::fulfill_or_make_available(slot_entry& entry, time_point now) {
  // Requests sent to the RM first (oldest first), then those still waiting for one.
  pending_request* best = nullptr;
  for (auto& [id, req] : pending_)
    if (entry.profile.is_matching(req.profile)
        && (best == nullptr || req.generation < best->generation))
      best = &req;
  if (best != nullptr) {
    auto id = best->id;
    // The request's own allocation stays at the RM; when its slot comes it serves another
    // request or becomes available (Flink's SlotPool does the same).
    pending_by_allocation_.erase(*best->allocation);
    pending_.erase(id);
    allocate_to(entry, id);
    return;
  }
  for (auto w = waiting_.begin(); w != waiting_.end(); ++w)
    if (entry.profile.is_matching(w->profile)) {
      auto id = w->id;
      waiting_.erase(w);
      allocate_to(entry, id);
      return;
    }
  entry.user.reset();
  entry.available_since = now;
  entry.order = next_order_++;
}

// -- task executors -----------------------------------------------------------------------------------

void slot_pool_state::register_task_manager(const cluster::resource_id& id) {
  log_debug("Register TaskManager " + id + " at the SlotPool.");
  task_managers_.insert(id);
}

std::vector<slot_request_id> slot_pool_state::release_task_manager(const cluster::resource_id& id,
                                                                   const std::string& cause,
                                                                   bool free_slots) {
  std::vector<slot_request_id> users;
  if (task_managers_.erase(id) == 0)
    return users;
  log_debug("Releasing TaskManager " + id + " from the SlotPool: " + cause);
  std::vector<slot_entry> removed;
  for (auto i = slots_.begin(); i != slots_.end();) {
    if (i->second.slot.location.id == id) {
      if (i->second.user) {
        users.push_back(*i->second.user);
        allocated_by_request_.erase(*i->second.user);
      }
      removed.push_back(std::move(i->second));
      i = slots_.erase(i);
    } else {
      ++i;
    }
  }
  if (free_slots)
    for (auto& entry : removed)
      actions_.free_slot_at_task_executor(entry.slot, cause);
  return users;
}

std::vector<cluster::slot_offer> slot_pool_state::offer_slots(
  const cluster::task_manager_location& location, const std::string& task_executor_address,
  const std::vector<cluster::slot_offer>& offers, time_point now) {
  std::vector<cluster::slot_offer> accepted;
  if (!is_registered(location.id)) {
    log_debug("Received outdated slot offering from unregistered TaskManager " + location.id + ".");
    return accepted;
  }
  for (const auto& offer : offers) {
    if (auto existing = slots_.find(offer.allocation); existing != slots_.end()) {
      // A repeated offer of a slot we hold is accepted again; the same allocation id from
      // another slot is refused.
      const auto& held = existing->second.slot;
      if (held.location.id == location.id && held.slot_index == offer.slot_index)
        accepted.push_back(offer);
      continue;
    }
    slot_entry entry;
    entry.slot =
      allocated_slot{offer.allocation, offer.slot_index, location, task_executor_address};
    entry.profile = offer.profile;
    auto& stored = slots_.emplace(offer.allocation, std::move(entry)).first->second;
    accepted.push_back(offer);
    if (auto p = pending_by_allocation_.find(offer.allocation); p != pending_by_allocation_.end()) {
      auto request = p->second;
      pending_by_allocation_.erase(p);
      pending_.erase(request);
      allocate_to(stored, request);
    } else {
      fulfill_or_make_available(stored, now);
    }
  }
  return accepted;
}

std::optional<slot_request_id> slot_pool_state::fail_allocation(
  const cluster::allocation_id& allocation, const std::string& cause) {
  if (auto p = pending_by_allocation_.find(allocation); p != pending_by_allocation_.end()) {
    auto request = p->second;
    pending_by_allocation_.erase(p);
    pending_.erase(request);
    fail(request,
         make_error(errc::rejected, "Allocation " + allocation.to_string() + " failed: " + cause));
    return std::nullopt;
  }
  auto s = slots_.find(allocation);
  if (s == slots_.end())
    return std::nullopt;
  auto user = s->second.user;
  if (user)
    allocated_by_request_.erase(*user);
  slots_.erase(s);
  return user;
}

void slot_pool_state::free_slot_failed(const allocated_slot& slot,
                                       const cluster::resource_profile& profile, time_point now) {
  if (!is_registered(slot.location.id) || slots_.count(slot.allocation_id) != 0)
    return;
  log_debug("Releasing slot " + slot.allocation_id.to_string() + " of registered TaskExecutor "
            + slot.location.id + " failed. Trying to fulfill a different slot request.");
  slot_entry entry;
  entry.slot = slot;
  entry.profile = profile;
  auto& stored = slots_.emplace(slot.allocation_id, std::move(entry)).first->second;
  fulfill_or_make_available(stored, now);
}

// -- idle slots and leadership ----------------------------------------------------------------------

std::size_t slot_pool_state::check_idle_slots(time_point now) {
  std::vector<slot_entry> expired;
  for (auto i = slots_.begin(); i != slots_.end();) {
    if (!i->second.user && now - i->second.available_since >= settings_.slot_idle_timeout) {
      expired.push_back(std::move(i->second));
      i = slots_.erase(i);
    } else {
      ++i;
    }
  }
  for (auto& entry : expired) {
    log_info("Releasing idle slot [" + entry.slot.allocation_id.to_string() + "].");
    actions_.free_slot_at_task_executor(entry.slot, "Releasing idle slot.");
  }
  return expired.size();
}

void slot_pool_state::suspend() {
  rm_connected_ = false;
  std::vector<slot_request_id> failed;
  for (auto& [id, req] : pending_)
    failed.push_back(id);
  for (auto& req : waiting_)
    failed.push_back(req.id);
  pending_.clear();
  pending_by_allocation_.clear();
  waiting_.clear();
  slots_.clear();
  allocated_by_request_.clear();
  task_managers_.clear();
  for (auto& id : failed)
    fail(id, make_error(errc::rejected, "The SlotPool is suspended (leadership lost)."));
}

// -- inspection -------------------------------------------------------------------------------------

std::size_t slot_pool_state::available_count() const {
  return static_cast<std::size_t>(
    std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return !s.second.user; }));
}

std::size_t slot_pool_state::allocated_count() const {
  return slots_.size() - available_count();
}

std::optional<cluster::allocation_id> slot_pool_state::pending_allocation(
  const slot_request_id& request) const {
  if (auto i = pending_.find(request); i != pending_.end())
    return i->second.allocation;
  return std::nullopt;
}

std::optional<allocated_slot> slot_pool_state::slot_of(const slot_request_id& request) const {
  auto a = allocated_by_request_.find(request);
  if (a == allocated_by_request_.end())
    return std::nullopt;
  return slots_.at(a->second).slot;
}

} // namespace flint::slot_pool
