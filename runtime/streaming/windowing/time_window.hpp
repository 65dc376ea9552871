#pragma once
/// Flink's TimeWindow: the half-open interval [start, end) of event or processing time, in
/// milliseconds, with the window arithmetic its assigners share (window starts with an offset,
/// the merging of session windows).

#include "runtime/streaming/windowing/merge_callback.hpp"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flint::streaming {

/// a + b, saturating at the int64 limits.
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}
/// a - b, saturating at the int64 limits.
inline std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  return r;
}

namespace time_window_detail {
using wide = __int128;
inline std::int64_t clamp(wide v) {
  if (v < std::numeric_limits<std::int64_t>::min())
    return std::numeric_limits<std::int64_t>::min();
  if (v > std::numeric_limits<std::int64_t>::max())
    return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(v);
}
/// The start of the window of `size` aligned to `offset` holding `timestamp`, unbounded.
inline wide floor_start(std::int64_t timestamp, std::int64_t offset, std::int64_t size) {
  auto remainder = (wide(timestamp) - offset) % size;
  if (remainder < 0)
    remainder += size;
  return wide(timestamp) - remainder;
}
} // namespace time_window_detail

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
  /// A start before INT64_MIN is INT64_MIN (Java's long arithmetic wraps there).
  static std::int64_t get_window_start_with_offset(std::int64_t timestamp, std::int64_t offset,
                                                   std::int64_t size);

  /// Calls `f(window)` for the windows of `size` every `slide` aligned to `offset` that hold
  /// `timestamp`, latest start first: the tumbling (slide = size) and sliding assigners'
  /// windows. Kept within the int64 range, where Flink's long arithmetic wraps: a start before
  /// INT64_MIN is INT64_MIN, an end after INT64_MAX is INT64_MAX, and a timestamp of INT64_MAX
  /// is taken as INT64_MAX - 1, so no window ends after INT64_MAX and every window's max
  /// timestamp is below the end-of-input watermark, which fires it.
  template <class F>
  static void for_each_holding(std::int64_t timestamp, std::int64_t size, std::int64_t slide,
                               std::int64_t offset, F&& f) {
    using namespace time_window_detail;
    if (timestamp == std::numeric_limits<std::int64_t>::max())
      --timestamp;
    // The earliest window holding `timestamp` starts after timestamp - size.
    for (auto start = floor_start(timestamp, offset, slide); start > wide(timestamp) - size;
         start -= slide)
      f(time_window{clamp(start), clamp(start + size)});
  }
  /// The one window of `size` aligned to `offset` holding `timestamp` (for_each_holding).
  static time_window aligned(std::int64_t timestamp, std::int64_t size, std::int64_t offset) {
    time_window out;
    for_each_holding(timestamp, size, size, offset, [&](const time_window& w) { out = w; });
    return out;
  }

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
