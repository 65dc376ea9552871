#include "runtime/state/heap_keyed_state_backend.hpp"

#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/keyed_state_files.hpp"

#include <algorithm>
#include <memory>
#include <utility>
#include <optional>
#include <stdexcept>

namespace flint::state {

heap_keyed_state_backend::heap_keyed_state_backend(key_group_range key_groups)
  : key_groups_(key_groups) {}

std::uint32_t heap_keyed_state_backend::register_state(const std::string& name) {
  if (auto it = numbers_.find(name); it != numbers_.end())
    return it->second;
  auto number = static_cast<std::uint32_t>(states_.size());
  states_.push_back({name, std::vector<key_group_entries>(
                             static_cast<std::size_t>(std::max(key_groups_.size(), 0)))});
  numbers_.emplace(name, number);
  return number;
}

heap_keyed_state_backend::key_group_entries&
heap_keyed_state_backend::group(std::uint32_t state, std::int32_t key_group) {
  if (state >= states_.size())
    throw std::out_of_range("keyed state backend: no state number " + std::to_string(state));
  if (!key_groups_.contains(key_group))
    throw std::out_of_range(
      "keyed state backend of key groups [" + std::to_string(key_groups_.first) + ", "
      + std::to_string(key_groups_.last) + "]: key group " + std::to_string(key_group));
  return states_[state].groups[static_cast<std::size_t>(key_group - key_groups_.first)];
}

bool heap_keyed_state_backend::get(std::uint32_t state, std::int32_t key_group,
                                   std::string_view key, std::string& value) {
  auto& g = group(state, key_group);
  auto it = g.by_key.find(key);
  if (it == g.by_key.end())
    return false;
  value = it->second->second;
  return true;
}

void heap_keyed_state_backend::put(std::uint32_t state, std::int32_t key_group,
                                   std::string_view key, std::string_view value) {
  auto& g = group(state, key_group);
  if (auto it = g.by_key.find(key); it != g.by_key.end()) {
    it->second->second.assign(value);
    return;
  }
  auto at = g.ordered.emplace(std::string(key), std::string(value)).first;
  g.by_key.emplace(std::string_view(at->first), at);
}

void heap_keyed_state_backend::remove(std::uint32_t state, std::int32_t key_group,
                                      std::string_view key) {
  auto& g = group(state, key_group);
  if (auto it = g.by_key.find(key); it != g.by_key.end()) {
    auto node = it->second;
    g.by_key.erase(it);
    g.ordered.erase(node);
  }
}

void heap_keyed_state_backend::for_each(
  std::uint32_t state, std::int32_t key_group, std::string_view prefix,
  const std::function<void(std::string_view, std::string_view)>& f) {
  auto& entries = group(state, key_group).ordered;
  for (auto it = entries.lower_bound(prefix); it != entries.end() && it->first.starts_with(prefix);
       ++it)
    f(it->first, it->second);
}

keyed_snapshot_upload heap_keyed_state_backend::snapshot(std::int64_t checkpoint_id) {
  (void)checkpoint_id;
  // Participants that capture their state (copy-on-write) are written on the upload thread;
  // the others write now.
  auto captured = std::make_shared<std::vector<std::unique_ptr<participant_snapshot>>>();
  std::vector<snapshot_participant*> now;
  for (auto* p : participants_) {
    if (auto c = p->capture_snapshot())
      captured->push_back(std::move(c));
    else
      now.push_back(p);
  }
  for (auto* p : now)
    p->begin_snapshot();
  // Serializing is the copy: one buffer per key group costs less than copying the maps' nodes,
  // and the upload then touches nothing of the live state.
  std::vector<std::vector<char>> key_groups;
  key_groups.reserve(static_cast<std::size_t>(std::max(key_groups_.size(), 0)));
  key_group_entries_writer writer;
  for (int g = 0; g < key_groups_.size(); ++g) {
    for (const auto& state : states_) {
      const auto& entries = state.groups[static_cast<std::size_t>(g)].ordered;
      if (entries.empty())
        continue;
      writer.begin_state(state.name);
      for (const auto& [key, value] : entries)
        writer.add(key, value);
    }
    for (auto* p : now)
      p->write_key_group(key_groups_.first + g, writer);
    key_groups.push_back(writer.take());
  }
  for (auto* p : now)
    p->end_snapshot();
  auto first = key_groups_.first;
  return [key_groups = std::move(key_groups), captured, first,
          ran = std::make_shared<bool>(false)](const snapshot_target& target) mutable
         -> expected<std::vector<keyed_state_handle>> {
    // It hands its state on (moved out, captures let go): a second run, of it or of a copy,
    // would write an empty snapshot and call it a success.
    if (std::exchange(*ran, true))
      return make_error(errc::internal, "this keyed state snapshot was already written");
    auto path = target.checkpoint_dir.empty()
      ? ""
      : target.checkpoint_dir + "/" + target.file_prefix + "-keyed";
    if (captured->empty()) {
      auto handle = write_keyed_state(path, first, key_groups);
      if (!handle)
        return handle.error();
      return std::vector<keyed_state_handle>{std::move(*handle)};
    }
    // Key group by key group: the captured participants' sections after the backend's own.
    auto out = keyed_state_writer::create(path, first);
    if (!out)
      return out.error();
    key_group_entries_writer writer;
    for (std::size_t g = 0; g < key_groups.size(); ++g) {
      for (auto& c : *captured)
        c->write_key_group(first + static_cast<std::int32_t>(g), writer);
      auto bytes = std::move(key_groups[g]);
      auto more = writer.take();
      if (bytes.empty())
        bytes = std::move(more);
      else
        bytes.insert(bytes.end(), more.begin(), more.end());
      if (auto appended = out->append(bytes); !appended)
        return appended.error();
    }
    // The owners copy what they change only while a capture lives: let go of them at once.
    captured->clear();
    auto handle = out->finish();
    if (!handle)
      return handle.error();
    return std::vector<keyed_state_handle>{std::move(*handle)};
  };
}

bool heap_keyed_state_backend::add_snapshot_participant(snapshot_participant* p) {
  participants_.push_back(p);
  return true;
}

void heap_keyed_state_backend::remove_snapshot_participant(snapshot_participant* p) {
  std::erase(participants_, p);
}

expected<unit> heap_keyed_state_backend::restore(const std::vector<keyed_state_handle>& handles) {
  std::optional<std::string> last_name;
  std::uint32_t last_number = 0;
  auto put_entry = [&](std::string_view name, std::int32_t key_group, std::string_view key,
                       std::string_view value) {
    if (!last_name || name != *last_name) {
      last_name.emplace(name);
      last_number = register_state(*last_name);
    }
    put(last_number, key_group, key, value);
  };
  for (const auto& handle : handles)
    if (auto read = read_backend_entries(handle, key_groups_, put_entry); !read)
      return read;
  return unit{};
}

} // namespace flint::state
