#include "runtime/ha/completed_checkpoint_store.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>

#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"

namespace flint::ha {

namespace {

expected<unit> check_pointer(const checkpoint_pointer& p) {
  if (p.checkpoint_id < 0)
    return make_error(errc::invalid_argument,
                      "add checkpoint " + std::to_string(p.checkpoint_id) + ": negative id");
  if (p.metadata_path.empty())
    return make_error(errc::invalid_argument,
                      "add checkpoint " + std::to_string(p.checkpoint_id) + ": no metadata path");
  return unit{};
}

/// The id of a child name, if it is one of ours (19 decimal digits).
std::optional<std::int64_t> name_to_checkpoint_id(const std::string& name) {
  if (name.size() != 19)
    return std::nullopt;
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc{} || end != name.data() + name.size() || id < 0)
    return std::nullopt;
  return id;
}

/// Data that can be a metadata path: not empty, no control characters (NUL included).
bool looks_like_path(const std::string& data) {
  return !data.empty() && std::none_of(data.begin(), data.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

} // namespace

// ---- standalone ---------------------------------------------------------------------------------

expected<unit> standalone_completed_checkpoint_store::add(const checkpoint_pointer& p) {
  if (auto ok = check_pointer(p); !ok)
    return ok;
  std::lock_guard guard{mutex_};
  entries_.insert_or_assign(p.checkpoint_id, p.metadata_path);
  return unit{};
}

expected<unit> standalone_completed_checkpoint_store::remove(std::int64_t checkpoint_id) {
  std::lock_guard guard{mutex_};
  entries_.erase(checkpoint_id);
  return unit{};
}

expected<std::vector<checkpoint_pointer>> standalone_completed_checkpoint_store::checkpoints() {
  std::lock_guard guard{mutex_};
  std::vector<checkpoint_pointer> out;
  out.reserve(entries_.size());
  for (const auto& [id, path] : entries_)
    out.push_back({id, path});
  return out;
}

expected<unit> standalone_completed_checkpoint_store::shutdown(bool globally_terminal) {
  if (globally_terminal) {
    std::lock_guard guard{mutex_};
    entries_.clear();
  }
  return unit{};
}

// ---- ZooKeeper ----------------------------------------------------------------------------------

zookeeper_completed_checkpoint_store::zookeeper_completed_checkpoint_store(
  std::shared_ptr<zookeeper_client> client, std::string path, std::shared_ptr<spdlog::logger> log)
  : client_(std::move(client)),
    path_(std::move(path)),
    log_(std::move(log)) {}

std::string zookeeper_completed_checkpoint_store::checkpoint_id_to_name(
  std::int64_t checkpoint_id) {
  char name[32];
  std::snprintf(name, sizeof name, "%019lld", static_cast<long long>(checkpoint_id));
  return name;
}

expected<unit> zookeeper_completed_checkpoint_store::add(const checkpoint_pointer& p) {
  if (auto ok = check_pointer(p); !ok)
    return ok;
  auto node = path_ + "/" + checkpoint_id_to_name(p.checkpoint_id);
  auto created = client_->create(node, p.metadata_path, {.create_parents = true});
  if (created)
    return unit{};
  if (created.error().code != errc::rejected)
    return make_error(
      created.error().code,
      "add checkpoint " + std::to_string(p.checkpoint_id) + ": " + created.error().message);
  // Already there (a retry after a connection loss that had applied the create, or the same id
  // added again): make it point where the caller says.
  auto set = client_->set(node, p.metadata_path);
  if (!set)
    return make_error(
      set.error().code,
      "add checkpoint " + std::to_string(p.checkpoint_id) + ": " + set.error().message);
  return unit{};
}

expected<unit> zookeeper_completed_checkpoint_store::remove(std::int64_t checkpoint_id) {
  auto removed = client_->remove(path_ + "/" + checkpoint_id_to_name(checkpoint_id));
  if (!removed && removed.error().code != errc::not_found)
    return make_error(
      removed.error().code,
      "remove checkpoint " + std::to_string(checkpoint_id) + ": " + removed.error().message);
  return unit{};
}

expected<std::vector<checkpoint_pointer>> zookeeper_completed_checkpoint_store::checkpoints() {
  std::vector<checkpoint_pointer> out;
  auto names = client_->children(path_);
  if (!names) {
    // The job never completed a checkpoint.
    if (names.error().code == errc::not_found)
      return out;
    return make_error(names.error().code, "list checkpoints: " + names.error().message);
  }
  for (const auto& name : *names) {
    auto id = name_to_checkpoint_id(name);
    if (!id) {
      if (log_)
        log_->warn("checkpoint store {}: skipping child '{}', not a checkpoint id", path_, name);
      continue;
    }
    auto node = client_->get(path_ + "/" + name);
    if (!node) {
      // Removed (subsumed) between listing and reading.
      if (node.error().code == errc::not_found)
        continue;
      return make_error(node.error().code, "list checkpoints: " + node.error().message);
    }
    if (!looks_like_path(node->data)) {
      if (log_)
        log_->warn(
          "checkpoint store {}: skipping checkpoint {}, its node holds no metadata path "
          "({} bytes)",
          path_, *id, node->data.size());
      continue;
    }
    out.push_back({*id, std::move(node->data)});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.checkpoint_id < b.checkpoint_id; });
  return out;
}

expected<unit> zookeeper_completed_checkpoint_store::shutdown(bool globally_terminal) {
  if (!globally_terminal)
    return unit{};
  auto fail = [](const error& e) {
    return make_error(e.code, "checkpoint store shutdown: " + e.message);
  };
  auto names = client_->children(path_);
  if (!names && names.error().code != errc::not_found)
    return fail(names.error());
  if (names) {
    for (const auto& name : *names)
      if (auto r = client_->remove(path_ + "/" + name); !r && r.error().code != errc::not_found)
        return fail(r.error());
    if (auto r = client_->remove(path_); !r && r.error().code != errc::not_found)
      return fail(r.error());
  }
  // The job's node, once its counter is gone too; whoever removes the last child wins.
  auto job_node = parent_path(path_);
  if (job_node.empty())
    return unit{};
  auto parent = client_->remove(job_node);
  if (!parent && parent.error().code != errc::not_found
      && parent.error().code != errc::illegal_state && parent.error().code != errc::rejected)
    return fail(parent.error());
  return unit{};
}

} // namespace flint::ha
