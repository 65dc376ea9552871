#pragma once
/// Flink's GlobalWindow: the one window every element of a key falls into (global_windows).
/// It never ends, so it fires only by a trigger other than time.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace flint::streaming {

struct global_window {
  std::int64_t max_timestamp() const { return std::numeric_limits<std::int64_t>::max(); }

  friend auto operator<=>(const global_window&, const global_window&) = default;
  friend bool operator==(const global_window&, const global_window&) = default;

  /// One zero byte, as Flink's GlobalWindow.Serializer writes.
  static constexpr std::size_t serialized_size = 1;
  void append_to(std::string& out) const { out.push_back('\0'); }
  std::string to_bytes() const { return std::string(1, '\0'); }
  static std::optional<global_window> from_bytes(std::string_view bytes) {
    if (bytes.size() != serialized_size)
      return std::nullopt;
    return global_window{};
  }

  std::string to_string() const { return "GlobalWindow"; }
};

} // namespace flint::streaming

template <>
struct std::hash<flint::streaming::global_window> {
  std::size_t operator()(const flint::streaming::global_window&) const noexcept { return 0; }
};
