#include "runtime/state/rocksdb/rocksdb_incremental_files.hpp"

#include "runtime/state/detail/file_io.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

namespace flint::state {

namespace {

constexpr const char* file_kind = "RocksDB checkpoint file";

/// The uploaded file `path` of `size` bytes.
stream_state_handle file_handle(std::string path, std::uint64_t size) {
  stream_state_handle handle;
  handle.path = std::move(path);
  handle.size = size;
  return handle;
}

expected<named_file> upload(const std::filesystem::path& from, const std::string& dir,
                            const std::string& name) {
  std::error_code ec;
  auto to = std::filesystem::absolute(detail::local_path(dir) + "/" + name, ec).lexically_normal();
  if (ec)
    return make_error(
      errc::internal,
      std::string("Cannot write ") + file_kind + " " + dir + "/" + name + ": " + ec.message());
  auto size = detail::copy_file(from.string(), to.string(), file_kind);
  if (!size)
    return size.error();
  return named_file{from.filename().string(), file_handle(to.string(), *size)};
}

expected<unit> download(const named_file& file, const std::string& dir) {
  const auto& from = file.handle;
  if (file.name.empty() || file.name == "." || file.name == ".."
      || file.name.find('/') != std::string::npos)
    return make_error(
      errc::invalid_argument,
      std::string("Cannot restore ") + file_kind + " " + from.path + " as '" + file.name + "'");
  auto to = dir + "/" + file.name;
  if (from.is_inline()) {
    std::span<const char> bytes(from.inline_data);
    return detail::write_file(to, std::span(&bytes, 1), file_kind);
  }
  std::error_code ec;
  auto size = std::filesystem::file_size(from.path, ec);
  if (ec)
    return make_error(
      ec == std::errc::no_such_file_or_directory ? errc::not_found : errc::internal,
      std::string("Cannot read ") + file_kind + " " + from.path + ": " + ec.message());
  if (from.offset == 0 && size == from.size) {
    auto copied = detail::copy_file(from.path, to, file_kind, false);
    if (!copied)
      return copied.error();
    if (*copied != from.size)
      return make_error(errc::invalid_argument,
                        std::string("Cannot read ") + file_kind + " " + from.path
                          + ": changed while copied (" + std::to_string(*copied) + " of "
                          + std::to_string(from.size) + " bytes)");
    return unit{};
  }
  // A part of a file, or a file of the wrong size (read_range names it truncated).
  auto bytes = detail::read_range(from.path, from.offset, from.size, file_kind);
  if (!bytes)
    return bytes.error();
  std::span<const char> part(*bytes);
  return detail::write_file(to, std::span(&part, 1), file_kind);
}

} // namespace

uploaded_ssts rocksdb_sst_registry::confirmed() const {
  std::lock_guard guard(mutex_);
  return confirmed_;
}

std::int64_t rocksdb_sst_registry::confirmed_id() const {
  std::lock_guard guard(mutex_);
  return confirmed_id_;
}

void rocksdb_sst_registry::uploaded(std::int64_t checkpoint_id, uploaded_ssts ssts) {
  std::lock_guard guard(mutex_);
  pending_[checkpoint_id] = std::move(ssts);
}

void rocksdb_sst_registry::complete(std::int64_t checkpoint_id) {
  std::lock_guard guard(mutex_);
  auto it = pending_.find(checkpoint_id);
  if (it == pending_.end())
    return;
  confirmed_ = std::move(it->second);
  confirmed_id_ = checkpoint_id;
  pending_.erase(pending_.begin(), std::next(it));
}

void rocksdb_sst_registry::restored(uploaded_ssts ssts) {
  std::lock_guard guard(mutex_);
  pending_.clear();
  confirmed_ = std::move(ssts);
  confirmed_id_ = -1;
}

expected<keyed_state_handle> upload_rocksdb_checkpoint(const std::string& local_dir,
                                                       const snapshot_target& target,
                                                       const rocksdb_upload_context& context,
                                                       uploaded_ssts& ssts) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(local_dir, ec), end; !ec && it != end;
       it.increment(ec))
    files.push_back(it->path());
  if (ec)
    return make_error(
      errc::internal,
      "Cannot list RocksDB checkpoint directory " + local_dir + ": " + ec.message());
  std::sort(files.begin(), files.end());

  keyed_state_handle handle;
  handle.first_key_group = context.key_groups.first;
  handle.last_key_group = context.key_groups.last;
  handle.incremental = true;
  handle.base_checkpoint_id = context.base_checkpoint_id;
  ssts.clear();
  // As upload() names what it writes there.
  std::error_code absolute_ec;
  auto own_shared_dir =
    std::filesystem::absolute(detail::local_path(target.shared_dir) + "/", absolute_ec)
      .lexically_normal()
      .string();
  if (absolute_ec)
    own_shared_dir = std::string(1, '\0'); // no path starts so: nothing is reused
  auto shared_prefix = target.file_prefix + "-" + context.instance_id + "-"
    + std::to_string(context.checkpoint_id) + "-";
  for (const auto& path : files) {
    auto name = path.filename().string();
    if (path.extension() == ".sst") {
      auto reused = context.reusable.find(name);
      if (reused != context.reusable.end()
          && !std::filesystem::path(reused->second.path).lexically_normal().string().starts_with(
            own_shared_dir))
        reused = context.reusable.end();
      if (reused != context.reusable.end()) {
        handle.shared_files.push_back({name, reused->second});
      } else {
        auto uploaded = upload(path, target.shared_dir, shared_prefix + name);
        if (!uploaded)
          return uploaded.error();
        handle.shared_files.push_back(std::move(*uploaded));
      }
      ssts[name] = handle.shared_files.back().handle;
      continue;
    }
    auto uploaded = upload(path, target.checkpoint_dir, target.file_prefix + "-" + name);
    if (!uploaded)
      return uploaded.error();
    handle.private_files.push_back(std::move(*uploaded));
  }
  return handle;
}

expected<unit> download_rocksdb_checkpoint(const keyed_state_handle& handle,
                                           const std::string& dir) {
  if (auto made = detail::make_directories(dir, "RocksDB instance directory"); !made)
    return made;
  for (const auto* files : {&handle.shared_files, &handle.private_files})
    for (const auto& file : *files)
      if (auto downloaded = download(file, dir); !downloaded)
        return downloaded;
  return unit{};
}

} // namespace flint::state
