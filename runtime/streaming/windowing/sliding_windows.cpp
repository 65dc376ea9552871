#include "runtime/streaming/windowing/sliding_windows.hpp"

#include "runtime/streaming/windowing/assigner_checks.hpp"

#include <stdexcept>

namespace flint::streaming {

namespace {

void check_sliding(const char* name, std::int64_t size, std::int64_t slide, std::int64_t offset) {
  // Also rejects slide <= 0, since |offset| >= 0.
  if (abs_of(offset) >= slide || size <= 0)
    throw std::invalid_argument(std::string(name) +
                                " parameters must satisfy abs(offset) < slide and size > 0");
  if (size / slide > sliding_event_time_windows::max_window_num)
    throw std::invalid_argument(std::string(name) + " parameters must satisfy size / slide <= " +
                                std::to_string(sliding_event_time_windows::max_window_num));
}

void sliding_windows(std::int64_t time, std::int64_t size, std::int64_t slide,
                     std::int64_t offset, std::vector<time_window>& windows) {
  time_window::for_each_holding(time, size, slide, offset,
                                [&](const time_window& w) { windows.push_back(w); });
}

} // namespace

sliding_event_time_windows::sliding_event_time_windows(std::int64_t size, std::int64_t slide,
                                                       std::int64_t offset)
  : size_(size), slide_(slide), offset_(offset) {
  check_sliding("SlidingEventTimeWindows", size, slide, offset);
}

sliding_event_time_windows sliding_event_time_windows::of(std::chrono::milliseconds size,
                                                          std::chrono::milliseconds slide,
                                                          std::chrono::milliseconds offset) {
  return {size.count(), slide.count(), offset.count()};
}

void sliding_event_time_windows::append_windows(std::int64_t timestamp, std::int64_t,
                                                std::vector<time_window>& out) const {
  check_has_timestamp(timestamp);
  sliding_windows(timestamp, size_, slide_, offset_, out);
}

std::string sliding_event_time_windows::to_string() const {
  return "SlidingEventTimeWindows(" + std::to_string(size_) + ", " + std::to_string(slide_) + ")";
}

sliding_processing_time_windows::sliding_processing_time_windows(std::int64_t size,
                                                                 std::int64_t slide,
                                                                 std::int64_t offset)
  : size_(size), slide_(slide), offset_(offset) {
  check_sliding("SlidingProcessingTimeWindows", size, slide, offset);
}

sliding_processing_time_windows sliding_processing_time_windows::of(
  std::chrono::milliseconds size, std::chrono::milliseconds slide,
  std::chrono::milliseconds offset) {
  return {size.count(), slide.count(), offset.count()};
}

void sliding_processing_time_windows::append_windows(std::int64_t, std::int64_t processing_time,
                                                     std::vector<time_window>& out) const {
  sliding_windows(processing_time, size_, slide_, offset_, out);
}

std::string sliding_processing_time_windows::to_string() const {
  return "SlidingProcessingTimeWindows(" + std::to_string(size_) + ", " + std::to_string(slide_) +
         ")";
}

} // namespace flint::streaming
