#pragma once
/// Flink's TimeWindow: the half-open interval [start, end) of event or processing time, in
/// milliseconds, with the window arithmetic its assigners share (window starts with an offset,
/// the merging of session windows).

#include "runtime/streaming/windowing/merge_callback.hpp"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flint::streaming {

struct time_window {
  std::int64_t start = 0;
  std::int64_t end = 0;

  /// The largest timestamp still in the window: end - 1 (a window's results carry it).
  std::int64_t max_timestamp() const { return end - 1; }

  /// Whether the two windows overlap or touch ([0, 5) and [5, 10) do, so sessions chain).
  bool intersects(const time_window& other) const {
    return start <= other.end && end >= other.start;
  }
  /// The smallest window holding both.
  time_window cover(const time_window& other) const {
    return {start < other.start ? start : other.start, end > other.end ? end : other.end};
  }

  /// By start, then end.
  friend auto operator<=>(const time_window&, const time_window&) = default;
  friend bool operator==(const time_window&, const time_window&) = default;

  /// Bytes of a fixed size whose order is the windows' order (keys of state namespaces).
  static constexpr std::size_t serialized_size = 16;
  /// Inline: the window operator builds a state key from it per record.
  void append_to(std::string& out) const {
    char bytes[serialized_size];
    auto put = [&](std::size_t at, std::int64_t value) {
      auto bits = static_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << 63);
      for (std::size_t i = 0; i < 8; ++i)
        bytes[at + i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
    };
    put(0, start);
    put(8, end);
    out.append(bytes, serialized_size);
  }
  std::string to_bytes() const;
  /// The window of `serialized_size` bytes; none for other bytes.
  static std::optional<time_window> from_bytes(std::string_view bytes);

  /// The start of the window of `size` holding `timestamp`, windows aligned to `offset` (Flink's
  /// TimeWindow.getWindowStartWithOffset): floors also for timestamps before the epoch.
  static std::int64_t get_window_start_with_offset(std::int64_t timestamp, std::int64_t offset,
                                                   std::int64_t size);

  std::string to_string() const;
};

/// Flink's TimeWindow.mergeWindows: sorts `windows` by start and merges the ones that overlap or
/// touch; calls `callback` once per group of two or more distinct windows, with the group in
/// order and its cover.
void merge_windows(std::vector<time_window> windows, const merge_callback<time_window>& callback);

} // namespace flint::streaming

template <>
struct std::hash<flint::streaming::time_window> {
  std::size_t operator()(const flint::streaming::time_window& w) const noexcept {
    auto h = std::hash<std::int64_t>{}(w.start);
    return h ^ (std::hash<std::int64_t>{}(w.end) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }
};
