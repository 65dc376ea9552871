#include "runtime/streaming/windowing/tumbling_windows.hpp"

#include "runtime/streaming/windowing/assigner_checks.hpp"

#include <stdexcept>

namespace flint::streaming {

namespace {

void check_tumbling(const char* name, std::int64_t size, std::int64_t offset) {
  // Also rejects size <= 0, since |offset| >= 0.
  if (abs_of(offset) >= size)
    throw std::invalid_argument(std::string(name) + " parameters must satisfy abs(offset) < size");
}

time_window tumbling_window(std::int64_t time, std::int64_t size, std::int64_t offset) {
  return time_window::aligned(time, size, offset);
}

} // namespace

tumbling_event_time_windows::tumbling_event_time_windows(std::int64_t size, std::int64_t offset)
  : size_(size), offset_(offset) {
  check_tumbling("TumblingEventTimeWindows", size, offset);
}

tumbling_event_time_windows tumbling_event_time_windows::of(std::chrono::milliseconds size,
                                                            std::chrono::milliseconds offset) {
  return {size.count(), offset.count()};
}

void tumbling_event_time_windows::append_windows(std::int64_t timestamp, std::int64_t,
                                                 std::vector<time_window>& out) const {
  check_has_timestamp(timestamp);
  out.push_back(tumbling_window(timestamp, size_, offset_));
}

std::string tumbling_event_time_windows::to_string() const {
  return "TumblingEventTimeWindows(" + std::to_string(size_) + ")";
}

tumbling_processing_time_windows::tumbling_processing_time_windows(std::int64_t size,
                                                                   std::int64_t offset)
  : size_(size), offset_(offset) {
  check_tumbling("TumblingProcessingTimeWindows", size, offset);
}

tumbling_processing_time_windows tumbling_processing_time_windows::of(
  std::chrono::milliseconds size, std::chrono::milliseconds offset) {
  return {size.count(), offset.count()};
}

void tumbling_processing_time_windows::append_windows(std::int64_t, std::int64_t processing_time,
                                                      std::vector<time_window>& out) const {
  out.push_back(tumbling_window(processing_time, size_, offset_));
}

std::string tumbling_processing_time_windows::to_string() const {
  return "TumblingProcessingTimeWindows(" + std::to_string(size_) + ")";
}

} // namespace flint::streaming
