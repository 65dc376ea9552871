#include "runtime/state/keyed_state_files.hpp"

#include "runtime/state/detail/file_io.hpp"
#include "runtime/state/operator_snapshot.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <system_error>

namespace flint::state {

namespace {

constexpr const char* file_kind = "keyed state file";

std::string range_text(const keyed_state_handle& handle) {
  return "[" + std::to_string(handle.first_key_group) + ", " + std::to_string(handle.last_key_group)
    + "]";
}

/// The handle's offsets fit its key groups and its bytes.
expected<unit> check_handle(const keyed_state_handle& handle) {
  auto where = [&] {
    return "keyed state handle of key groups " + range_text(handle)
      + (handle.data.is_inline() ? std::string(" (inline)") : " in " + handle.data.path);
  };
  if (handle.incremental)
    return make_error(errc::invalid_argument,
                      "keyed state handle of key groups " + range_text(handle)
                        + " is an incremental RocksDB checkpoint: only state.backend.type: "
                          "rocksdb restores it");
  auto count = static_cast<std::int64_t>(handle.last_key_group) - handle.first_key_group + 1;
  if (count < 0 || static_cast<std::int64_t>(handle.key_group_offsets.size()) != count)
    return make_error(
      errc::invalid_argument,
      where() + " has " + std::to_string(handle.key_group_offsets.size()) + " key group offsets");
  std::uint64_t previous = 0;
  for (auto offset : handle.key_group_offsets) {
    if (offset < previous || offset > handle.data.state_size())
      return make_error(errc::invalid_argument,
                        where() + ": key group offset " + std::to_string(offset)
                          + " out of order or beyond its "
                          + std::to_string(handle.data.state_size()) + " bytes");
    previous = offset;
  }
  if (!handle.data.is_inline()
      && handle.data.offset > std::numeric_limits<std::uint64_t>::max() - handle.data.size)
    return make_error(errc::invalid_argument, where() + " ends beyond 2^64 bytes");
  return unit{};
}

/// The handle outlives the task's working directory: it names the file absolutely.
expected<std::string> absolute_path(const std::string& file_path) {
  std::error_code ec;
  auto path = std::filesystem::absolute(detail::local_path(file_path), ec).lexically_normal();
  if (ec)
    return make_error(errc::internal,
                      "Cannot write keyed state file " + file_path + ": " + ec.message());
  return path.string();
}

} // namespace

expected<keyed_state_handle> write_keyed_state(const std::string& file_path,
                                               std::int32_t first_key_group,
                                               const std::vector<std::vector<char>>& key_groups) {
  auto last = static_cast<std::int64_t>(first_key_group) + key_groups.size() - 1;
  if (first_key_group < 0 || last > std::numeric_limits<std::int32_t>::max())
    return make_error(errc::invalid_argument,
                      "Cannot write keyed state of " + std::to_string(key_groups.size())
                        + " key groups from key group " + std::to_string(first_key_group));
  keyed_state_handle handle;
  handle.first_key_group = first_key_group;
  handle.last_key_group = static_cast<std::int32_t>(last);
  handle.key_group_offsets.reserve(key_groups.size());
  std::uint64_t size = 0;
  for (const auto& group : key_groups) {
    handle.key_group_offsets.push_back(size);
    size += group.size();
  }
  if (file_path.empty()) {
    handle.data.inline_data.reserve(size);
    for (const auto& group : key_groups)
      handle.data.inline_data.insert(handle.data.inline_data.end(), group.begin(), group.end());
    return handle;
  }

  auto path = absolute_path(file_path);
  if (!path)
    return path.error();
  // Around the page cache: the file is fsynced before the checkpoint completes and read only at
  // a restore, so copying it into the cache and writing it back from there is all cost.
  auto out = detail::file_writer::create_direct(*path, file_kind);
  if (!out)
    return out.error();
  for (const auto& group : key_groups)
    if (auto appended = out->append(group); !appended)
      return appended.error();
  if (auto closed = out->close(); !closed)
    return closed.error();
  handle.data.path = *path;
  handle.data.offset = 0;
  handle.data.size = size;
  return handle;
}

struct keyed_state_writer::file {
  detail::file_writer out;
};

expected<keyed_state_writer> keyed_state_writer::create(const std::string& file_path,
                                                        std::int32_t first_key_group) {
  if (first_key_group < 0)
    return make_error(errc::invalid_argument,
                      "Cannot write keyed state from key group " + std::to_string(first_key_group));
  keyed_state_handle handle;
  handle.first_key_group = first_key_group;
  handle.last_key_group = first_key_group - 1;
  if (file_path.empty())
    return keyed_state_writer(std::move(handle), nullptr);
  auto path = absolute_path(file_path);
  if (!path)
    return path.error();
  auto out = detail::file_writer::create_direct(*path, file_kind);
  if (!out)
    return out.error();
  handle.data.path = *path;
  return keyed_state_writer(std::move(handle), std::make_unique<file>(file{std::move(*out)}));
}

keyed_state_writer::keyed_state_writer(keyed_state_handle handle, std::unique_ptr<file> out)
  : handle_(std::move(handle)),
    file_(std::move(out)) {}

keyed_state_writer::keyed_state_writer(keyed_state_writer&&) noexcept = default;
keyed_state_writer& keyed_state_writer::operator=(keyed_state_writer&&) noexcept = default;
keyed_state_writer::~keyed_state_writer() = default;

expected<unit> keyed_state_writer::append(std::span<const char> key_group) {
  if (handle_.last_key_group == std::numeric_limits<std::int32_t>::max())
    return make_error(errc::invalid_argument, "Cannot write keyed state beyond key group 2^31 - 1");
  if (file_) {
    handle_.key_group_offsets.push_back(file_->out.size());
    if (auto appended = file_->out.append(key_group); !appended)
      return appended;
  } else {
    handle_.key_group_offsets.push_back(handle_.data.inline_data.size());
    handle_.data.inline_data.insert(handle_.data.inline_data.end(), key_group.begin(),
                                    key_group.end());
  }
  ++handle_.last_key_group;
  return unit{};
}

expected<keyed_state_handle> keyed_state_writer::finish() {
  if (file_) {
    handle_.data.size = file_->out.size();
    if (auto closed = file_->out.close(); !closed)
      return closed.error();
    file_.reset();
  }
  return std::move(handle_);
}

expected<unit> read_key_groups(const keyed_state_handle& handle, std::int32_t first,
                               std::int32_t last,
                               const std::function<void(std::int32_t, std::span<const char>)>& f) {
  if (auto checked = check_handle(handle); !checked)
    return checked.error();
  auto lo = std::max(first, handle.first_key_group);
  auto hi = std::min(last, handle.last_key_group);
  if (lo > hi)
    return unit{};
  const auto& offsets = handle.key_group_offsets;
  auto index = [&](std::int32_t key_group) {
    return static_cast<std::size_t>(key_group - handle.first_key_group);
  };
  auto end_of = [&](std::int32_t key_group) {
    auto i = index(key_group);
    return i + 1 < offsets.size() ? offsets[i + 1] : handle.data.state_size();
  };
  auto begin = offsets[index(lo)];
  auto end = end_of(hi);

  std::vector<char> file_bytes;
  std::span<const char> bytes; // [begin, end) of the handle's bytes
  if (handle.data.is_inline()) {
    bytes = std::span<const char>(handle.data.inline_data).subspan(begin, end - begin);
  } else {
    auto read =
      detail::read_range(handle.data.path, handle.data.offset + begin, end - begin, file_kind);
    if (!read)
      return read.error();
    file_bytes = std::move(*read);
    bytes = file_bytes;
  }
  for (auto key_group = lo; key_group <= hi; ++key_group) {
    auto from = offsets[index(key_group)] - begin;
    f(key_group, bytes.subspan(from, end_of(key_group) - begin - from));
  }
  return unit{};
}

expected<unit> operator_state_restore::for_each_key_group(
  std::int32_t first, std::int32_t last,
  const std::function<void(std::int32_t, std::span<const char>)>& f) const {
  for (const auto& handle : state_.keyed)
    if (auto read = read_key_groups(handle, first, last, f); !read)
      return read;
  return unit{};
}

} // namespace flint::state
