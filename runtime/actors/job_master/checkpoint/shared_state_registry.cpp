#include "runtime/actors/job_master/checkpoint/shared_state_registry.hpp"

#include "runtime/state/state_handles.hpp"

#include <algorithm>
#include <limits>

namespace flint::job_master::checkpoint {

void shared_state_registry::register_checkpoint(std::int64_t id,
                                                const std::vector<std::string>& files) {
  for (const auto& file : files) {
    auto& e = entries_[file];
    ++e.references;
    e.last_used = std::max(e.last_used, id);
  }
}

void shared_state_registry::unregister_checkpoint(const std::vector<std::string>& files) {
  for (const auto& file : files)
    if (auto it = entries_.find(file); it != entries_.end() && it->second.references > 0)
      --it->second.references;
}

bool shared_state_registry::in_use(const std::string& file) const {
  auto it = entries_.find(file);
  return it != entries_.end() && it->second.references > 0;
}

std::size_t shared_state_registry::unused() const {
  return static_cast<std::size_t>(std::count_if(
    entries_.begin(), entries_.end(), [](const auto& e) { return e.second.references == 0; }));
}

std::vector<std::string> shared_state_registry::delete_unused(
  std::int64_t lowest_base, const std::set<std::string>& in_flight,
  const std::function<void(const std::string&)>& remove) {
  std::vector<std::string> gone;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto& [file, e] = *it;
    if (e.references == 0 && e.last_used < lowest_base && in_flight.count(file) == 0) {
      remove(file);
      gone.push_back(file);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

std::int64_t lowest_base_checkpoint(const state::checkpoint_metadata& latest) {
  auto lowest = std::numeric_limits<std::int64_t>::max();
  for (const auto& op : latest.operators)
    for (const auto& subtask : op.subtasks)
      for (const auto& handle : subtask.keyed)
        if (handle.incremental)
          lowest = std::min(lowest, handle.base_checkpoint_id);
  return lowest;
}

} // namespace flint::job_master::checkpoint
