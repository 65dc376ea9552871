#include "runtime/ha/completed_checkpoint_store.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <system_error>
#include <utility>

#include "runtime/ha/durable_file.hpp"
#include "runtime/ha/storage_pointer.hpp"
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
  std::shared_ptr<zookeeper_client> client, std::string path, std::filesystem::path storage_dir,
  std::shared_ptr<spdlog::logger> log)
  : client_(std::move(client)),
    path_(std::move(path)),
    storage_dir_(std::move(storage_dir)),
    log_(std::move(log)) {
  // The nodes hold absolute paths, whichever directory the next JobMaster starts from.
  std::error_code ec;
  if (auto absolute = std::filesystem::absolute(storage_dir_, ec); !ec)
    storage_dir_ = absolute.lexically_normal();
}

std::string zookeeper_completed_checkpoint_store::checkpoint_id_to_name(
  std::int64_t checkpoint_id) {
  char name[32];
  std::snprintf(name, sizeof name, "%019lld", static_cast<long long>(checkpoint_id));
  return name;
}

std::filesystem::path zookeeper_completed_checkpoint_store::file_of(
  std::int64_t checkpoint_id) const {
  return storage_dir_ / checkpoint_id_to_name(checkpoint_id);
}

expected<unit> zookeeper_completed_checkpoint_store::add(const checkpoint_pointer& p) {
  if (auto ok = check_pointer(p); !ok)
    return ok;
  auto fail = [&](const error& e) {
    return make_error(e.code, "add checkpoint " + std::to_string(p.checkpoint_id) + ": " + e.message);
  };
  auto file = file_of(p.checkpoint_id);
  if (auto w = write_file_atomically(file, p.metadata_path); !w)
    return fail(w.error());
  auto node = path_ + "/" + checkpoint_id_to_name(p.checkpoint_id);
  auto created = client_->create(node, file.string(), {.create_parents = true});
  if (created)
    return unit{};
  if (created.error().code != errc::rejected)
    return fail(created.error());
  // Already there (a retry after a connection loss that had applied the create, or the same id
  // added again): point it at this store's file again, whose content was just replaced.
  if (auto set = client_->set(node, file.string()); !set)
    return fail(set.error());
  return unit{};
}

expected<unit> zookeeper_completed_checkpoint_store::remove_child(const std::string& name) {
  auto node = path_ + "/" + name;
  std::filesystem::path pointed;
  if (auto current = client_->get(node); current) {
    if (looks_like_path(current->data)) {
      auto resolved =
        resolve_storage_pointer(current->data, storage_dir_, "remove checkpoint node " + node);
      if (resolved)
        pointed = std::move(*resolved);
      else if (log_)
        log_->error("{}", resolved.error().message);
    }
  } else if (current.error().code != errc::not_found) {
    return current.error();
  }
  if (auto r = client_->remove(node); !r && r.error().code != errc::not_found)
    return r.error();
  for (const auto& file : {pointed, storage_dir_ / name}) {
    if (file.empty())
      continue;
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec)
      return make_error(errc::internal, "file " + file.string() + ": " + ec.message());
  }
  return unit{};
}

expected<unit> zookeeper_completed_checkpoint_store::remove(std::int64_t checkpoint_id) {
  if (auto r = remove_child(checkpoint_id_to_name(checkpoint_id)); !r)
    return make_error(r.error().code,
                      "remove checkpoint " + std::to_string(checkpoint_id) + ": " + r.error().message);
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
    auto node_path = path_ + "/" + name;
    auto node = client_->get(node_path);
    if (!node) {
      // Removed (subsumed) between listing and reading.
      if (node.error().code == errc::not_found)
        continue;
      return make_error(node.error().code, "list checkpoints: " + node.error().message);
    }
    if (!looks_like_path(node->data)) {
      if (log_)
        log_->warn(
          "checkpoint store {}: skipping checkpoint {}, its node holds no file path ({} bytes)",
          path_, *id, node->data.size());
      continue;
    }
    auto file = resolve_storage_pointer(node->data, storage_dir_,
                                        "list checkpoints: checkpoint " + std::to_string(*id));
    if (!file)
      return file.error();
    auto metadata = read_whole_file(*file);
    if (!metadata) {
      // Subsumed by another JobMaster between reading the node and the file: the node is gone.
      if (metadata.error().code == errc::not_found) {
        auto still = client_->exists(node_path);
        if (still && !still->has_value())
          continue;
      }
      return make_error(metadata.error().code, "list checkpoints: checkpoint "
                                                 + std::to_string(*id) + ": "
                                                 + metadata.error().message);
    }
    if (!looks_like_path(*metadata))
      return make_error(errc::malformed_message,
                        "list checkpoints: checkpoint " + std::to_string(*id) + ": file "
                          + file->string() + " holds no metadata path");
    out.push_back({*id, std::move(*metadata)});
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
      if (auto r = remove_child(name); !r)
        return fail(r.error());
    if (auto r = client_->remove(path_); !r && r.error().code != errc::not_found)
      return fail(r.error());
  }
  // The job's pointer directory, if nothing else is left in it.
  std::error_code ec;
  std::filesystem::remove(storage_dir_, ec);
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
