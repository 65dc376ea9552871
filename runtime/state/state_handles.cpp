#include "runtime/state/state_handles.hpp"

#include <algorithm>

namespace flint::state {

std::uint64_t keyed_state_handle::state_size() const noexcept {
  if (!incremental)
    return data.state_size();
  std::uint64_t size = 0;
  for (const auto* files : {&shared_files, &private_files})
    for (const auto& file : *files)
      size += file.handle.state_size();
  return size;
}

std::uint64_t operator_subtask_state::state_size() const noexcept {
  std::uint64_t size = 0;
  for (const auto& handle : keyed)
    size += handle.state_size();
  for (const auto& entry : list_entries)
    size += entry.size();
  return size;
}

std::uint64_t task_state_snapshot::state_size() const noexcept {
  std::uint64_t size = 0;
  for (const auto& op : operators)
    size += op.state_size();
  return size;
}

std::uint64_t operator_state::state_size() const noexcept {
  std::uint64_t size = 0;
  for (const auto& subtask : subtasks)
    size += subtask.state_size();
  return size;
}

bool operator_state::fully_finished() const noexcept {
  if (parallelism <= 0 || finished.size() < static_cast<std::size_t>(parallelism))
    return false;
  return std::all_of(finished.begin(), finished.begin() + parallelism, [](bool f) { return f; });
}

bool operator_state::has_keyed_state() const noexcept {
  return std::any_of(subtasks.begin(), subtasks.end(),
                     [](const operator_subtask_state& s) { return !s.keyed.empty(); });
}

bool operator_state::has_state() const noexcept {
  return std::any_of(subtasks.begin(), subtasks.end(),
                     [](const operator_subtask_state& s) { return !s.empty(); });
}

std::uint64_t checkpoint_metadata::state_size() const noexcept {
  std::uint64_t size = 0;
  for (const auto& op : operators)
    size += op.state_size();
  return size;
}

const operator_state* checkpoint_metadata::find(const graph::operator_id& id) const {
  for (const auto& op : operators)
    if (op.operator_id == id)
      return &op;
  return nullptr;
}

std::vector<std::string> shared_state_files(const checkpoint_metadata& metadata) {
  std::vector<std::string> paths;
  for (const auto& op : metadata.operators)
    for (const auto& subtask : op.subtasks)
      for (const auto& handle : subtask.keyed)
        for (const auto& file : handle.shared_files)
          if (!file.handle.is_inline())
            paths.push_back(file.handle.path);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

std::vector<std::string> all_state_files(const checkpoint_metadata& metadata) {
  std::vector<std::string> paths;
  for (const auto& op : metadata.operators)
    for (const auto& subtask : op.subtasks)
      for (const auto& handle : subtask.keyed) {
        if (!handle.data.is_inline())
          paths.push_back(handle.data.path);
        for (const auto* files : {&handle.shared_files, &handle.private_files})
          for (const auto& file : *files)
            if (!file.handle.is_inline())
              paths.push_back(file.handle.path);
      }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

} // namespace flint::state
