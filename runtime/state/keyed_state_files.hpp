#pragma once
/// Keyed state in checkpoint storage (the asynchronous part of Flink's keyed snapshot and its
/// restore): an operator subtask's key groups, one after another in one file or inline in the
/// handle, and the reading back of a key-group range.

#include "runtime/common/expected.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace flint::state {

/// Writes `key_groups` (buffer `i` is key group `first_key_group + i`) one after another into
/// `file_path` (parent directories made, an existing file replaced), fsyncs it and returns the
/// handle with each group's offset. An empty `file_path` keeps the bytes in the handle
/// (`stream_state_handle::inline_data`). Errors name the path and the system's reason.
expected<keyed_state_handle> write_keyed_state(const std::string& file_path,
                                               std::int32_t first_key_group,
                                               const std::vector<std::vector<char>>& key_groups);

/// The same file and handle as `write_keyed_state`, written key group by key group, so only one
/// group is in memory at a time (a RocksDB backend's full snapshot).
class keyed_state_writer {
public:
  /// An empty `file_path`: the bytes stay in the handle.
  static expected<keyed_state_writer> create(const std::string& file_path,
                                             std::int32_t first_key_group);
  keyed_state_writer(keyed_state_writer&&) noexcept;
  keyed_state_writer& operator=(keyed_state_writer&&) noexcept;
  ~keyed_state_writer();

  /// The next key group's bytes.
  expected<unit> append(std::span<const char> key_group);
  /// fsyncs and closes the file; the handle of the groups appended.
  expected<keyed_state_handle> finish();

private:
  struct file;
  keyed_state_writer(keyed_state_handle handle, std::unique_ptr<file> out);

  keyed_state_handle handle_;
  std::unique_ptr<file> file_; // null: inline
};

/// Calls `f(key_group, bytes)` for every key group of `handle` in [first, last], in order,
/// reading its file once. A missing or truncated file is an error naming it; a handle whose
/// offsets do not fit its range or bytes, or an incremental one, is `errc::invalid_argument`.
expected<unit> read_key_groups(const keyed_state_handle& handle, std::int32_t first,
                               std::int32_t last,
                               const std::function<void(std::int32_t, std::span<const char>)>& f);

} // namespace flint::state
