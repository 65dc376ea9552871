#include "runtime/streaming/windowing/session_windows.hpp"

#include "runtime/streaming/windowing/assigner_checks.hpp"

namespace flint::streaming {

namespace detail {

void check_session_gap(const char* name, std::int64_t gap) {
  if (gap <= 0)
    throw std::invalid_argument(std::string(name) + " parameters must satisfy 0 < size");
}

time_window session_window(const char* name, std::int64_t start, std::int64_t gap) {
  // A gap read from an element is the user's code going wrong at run time (Flink's message).
  if (gap <= 0)
    throw std::invalid_argument(std::string(name) + ": Dynamic session time gap must satisfy 0 < gap");
  return {start, start + gap};
}

} // namespace detail

event_time_session_windows::event_time_session_windows(std::int64_t gap) : gap_(gap) {
  detail::check_session_gap("EventTimeSessionWindows", gap);
}

event_time_session_windows event_time_session_windows::with_gap(std::chrono::milliseconds gap) {
  return event_time_session_windows(gap.count());
}

void event_time_session_windows::append_windows(std::int64_t timestamp, std::int64_t,
                                                std::vector<time_window>& out) const {
  // Flink lets a missing timestamp through here and opens a window at Long.MIN_VALUE; failing as
  // the other event-time assigners do names the mistake instead.
  check_has_timestamp(timestamp);
  out.push_back({timestamp, timestamp + gap_});
}

std::string event_time_session_windows::to_string() const {
  return "EventTimeSessionWindows(" + std::to_string(gap_) + ")";
}

processing_time_session_windows::processing_time_session_windows(std::int64_t gap) : gap_(gap) {
  detail::check_session_gap("ProcessingTimeSessionWindows", gap);
}

processing_time_session_windows processing_time_session_windows::with_gap(
  std::chrono::milliseconds gap) {
  return processing_time_session_windows(gap.count());
}

void processing_time_session_windows::append_windows(std::int64_t, std::int64_t processing_time,
                                                     std::vector<time_window>& out) const {
  out.push_back({processing_time, processing_time + gap_});
}

std::string processing_time_session_windows::to_string() const {
  return "ProcessingTimeSessionWindows(" + std::to_string(gap_) + ")";
}

} // namespace flint::streaming
