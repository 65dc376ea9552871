#pragma once
/// The bytes of one key group of a keyed_state_backend in a full snapshot: what both backends
/// write into `write_keyed_state` and read back at a restore, so a checkpoint of either restores
/// into the other (Flink's canonical keyed state format, cut to bytes).
///
/// A key group's bytes are sections, one per state with entries in the group:
///
///     [u32 name length][name][u32 entry count] then per entry [u32 key length][key]
///                                                             [u32 value length][value]
///
/// all lengths big-endian. A state is named, not numbered, so a restore maps it by name whatever
/// number the restoring backend gave it. An empty group is zero bytes.

#include "runtime/common/expected.hpp"
#include "runtime/state/key_group_range.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace flint::state {

/// Builds one key group's bytes.
class key_group_entries_writer {
public:
  /// Starts the section of `state_name`: the entries added next belong to it. A section left
  /// without entries is dropped.
  void begin_state(std::string_view state_name);
  /// Adds an entry to the current section (begin_state first).
  void add(std::string_view key, std::string_view value);
  /// The key group's bytes; the writer starts empty again.
  std::vector<char> take();

private:
  void close_section();

  std::vector<char> bytes_;
  /// Where the current section starts and its entry count goes.
  std::size_t section_start_ = 0;
  std::size_t count_at_ = 0;
  std::uint32_t count_ = 0;
  bool open_ = false;
};

/// Calls `f(state_name, key, value)` for every entry in `bytes`, section by section. Bytes that
/// are not whole sections are `errc::invalid_argument` saying where they stop making sense (the
/// caller adds which key group of which file).
expected<unit> read_key_group_entries(
  std::span<const char> bytes,
  const std::function<void(std::string_view, std::string_view, std::string_view)>& f);

/// Calls `f(state_name, key_group, key, value)` for every entry `handle` holds in the key groups
/// of `range` (reading its file once, `read_key_groups`). Errors name the file, or the key group
/// and the file whose bytes are malformed.
expected<unit> read_backend_entries(
  const keyed_state_handle& handle, key_group_range range,
  const std::function<void(std::string_view, std::int32_t, std::string_view, std::string_view)>& f);

} // namespace flint::state
