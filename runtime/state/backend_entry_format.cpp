#include "runtime/state/backend_entry_format.hpp"

#include "runtime/state/keyed_state_files.hpp"

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace flint::state {

namespace {

void put_u32(std::vector<char>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out.push_back(static_cast<char>((v >> (24 - 8 * i)) & 0xff));
}

void set_u32(char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}

void put_bytes(std::vector<char>& out, std::string_view bytes) {
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("keyed state entry of " + std::to_string(bytes.size())
                            + " bytes: at most 2^32 - 1 bytes per key, value or name");
  put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

/// Reads the bytes front to back; every read says what it wanted when the bytes end.
class reader {
public:
  explicit reader(std::span<const char> bytes) : bytes_(bytes) {}

  bool done() const { return pos_ == bytes_.size(); }
  std::size_t pos() const { return pos_; }

  bool u32(std::uint32_t& v) {
    if (bytes_.size() - pos_ < 4)
      return false;
    v = 0;
    for (int i = 0; i < 4; ++i)
      v = (v << 8) | static_cast<std::uint8_t>(bytes_[pos_ + i]);
    pos_ += 4;
    return true;
  }

  bool bytes(std::string_view& out) {
    std::uint32_t size = 0;
    if (!u32(size) || bytes_.size() - pos_ < size)
      return false;
    out = std::string_view(bytes_.data() + pos_, size);
    pos_ += size;
    return true;
  }

private:
  std::span<const char> bytes_;
  std::size_t pos_ = 0;
};

} // namespace

void key_group_entries_writer::begin_state(std::string_view state_name) {
  close_section();
  section_start_ = bytes_.size();
  put_bytes(bytes_, state_name);
  count_at_ = bytes_.size();
  put_u32(bytes_, 0);
  count_ = 0;
  open_ = true;
}

void key_group_entries_writer::add(std::string_view key, std::string_view value) {
  if (!open_)
    throw std::logic_error("key_group_entries_writer::add before begin_state");
  if (count_ == std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("more than 2^32 - 1 entries of one state in one key group");
  put_bytes(bytes_, key);
  put_bytes(bytes_, value);
  ++count_;
}

std::vector<char> key_group_entries_writer::take() {
  close_section();
  auto out = std::move(bytes_);
  bytes_.clear();
  return out;
}

void key_group_entries_writer::close_section() {
  if (!open_)
    return;
  open_ = false;
  if (count_ == 0) {
    bytes_.resize(section_start_);
    return;
  }
  set_u32(bytes_.data() + count_at_, count_);
}

expected<unit> read_key_group_entries(
  std::span<const char> bytes,
  const std::function<void(std::string_view, std::string_view, std::string_view)>& f) {
  reader in(bytes);
  auto fail = [&](const std::string& what) {
    return make_error(
      errc::invalid_argument,
      what + " at byte " + std::to_string(in.pos()) + " of " + std::to_string(bytes.size()));
  };
  while (!in.done()) {
    std::string_view name;
    std::uint32_t count = 0;
    if (!in.bytes(name))
      return fail("truncated state name");
    if (!in.u32(count))
      return fail("truncated entry count of state '" + std::string(name) + "'");
    for (std::uint32_t i = 0; i < count; ++i) {
      std::string_view key;
      std::string_view value;
      if (!in.bytes(key) || !in.bytes(value))
        return fail("truncated entry " + std::to_string(i) + " of " + std::to_string(count)
                    + " of state '" + std::string(name) + "'");
      f(name, key, value);
    }
  }
  return unit{};
}

expected<unit> read_backend_entries(
  const keyed_state_handle& handle, key_group_range range,
  const std::function<void(std::string_view, std::int32_t, std::string_view, std::string_view)>&
    f) {
  std::optional<error> failed;
  auto read = read_key_groups(
    handle, range.first, range.last, [&](std::int32_t key_group, std::span<const char> bytes) {
      if (failed)
        return;
      auto entries = read_key_group_entries(
        bytes, [&](std::string_view name, std::string_view key, std::string_view value) {
          f(name, key_group, key, value);
        });
      if (!entries)
        failed =
          make_error(entries.error().code,
                     "Cannot restore key group " + std::to_string(key_group) + " of keyed state "
                       + (handle.data.is_inline() ? std::string("(inline)") : handle.data.path)
                       + ": " + entries.error().message);
    });
  if (!read)
    return read;
  if (failed)
    return *failed;
  return unit{};
}

} // namespace flint::state
