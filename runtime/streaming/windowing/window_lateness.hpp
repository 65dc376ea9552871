#pragma once
/// When a window's state goes and which elements and windows are late (the allowed-lateness
/// rules of Flink's WindowOperator: cleanupTime, isCleanupTime, isWindowLate, isElementLate), for
/// the window operator and its tests.

#include <cstdint>
#include <limits>

namespace flint::streaming {

/// The time a window's contents, trigger state and merging metadata are dropped: its end plus
/// the allowed lateness for event time (saturating, so a late window near the end of time is
/// never dropped early), its end for processing time.
template <class W>
std::int64_t cleanup_time(const W& window, std::int64_t allowed_lateness, bool is_event_time) {
  if (!is_event_time)
    return window.max_timestamp();
  auto end = window.max_timestamp();
  if (allowed_lateness > 0 && end > std::numeric_limits<std::int64_t>::max() - allowed_lateness)
    return std::numeric_limits<std::int64_t>::max();
  return end + allowed_lateness;
}

/// Whether a timer at `time` is the window's cleanup timer.
template <class W>
bool is_cleanup_time(const W& window, std::int64_t time, std::int64_t allowed_lateness,
                     bool is_event_time) {
  return time == cleanup_time(window, allowed_lateness, is_event_time);
}

/// Whether an event-time window was cleaned up already: an element for it is dropped (or goes to
/// the late-data side output) instead of re-creating it.
template <class W>
bool is_window_late(const W& window, std::int64_t allowed_lateness, bool is_event_time,
                    std::int64_t current_watermark) {
  return is_event_time && cleanup_time(window, allowed_lateness, true) <= current_watermark;
}

/// Whether an event-time element is too late for every window it could belong to (Flink's test
/// for the late-data side output of non-merging assigners' elements).
inline bool is_element_late(std::int64_t timestamp, std::int64_t allowed_lateness,
                            bool is_event_time, std::int64_t current_watermark) {
  if (!is_event_time)
    return false;
  // timestamp + lateness, saturating as cleanup_time.
  if (allowed_lateness > 0 && timestamp > std::numeric_limits<std::int64_t>::max() - allowed_lateness)
    return false;
  return timestamp + allowed_lateness <= current_watermark;
}

} // namespace flint::streaming
