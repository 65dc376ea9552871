#include "runtime/streaming/windowing/time_window.hpp"

#include "runtime/streaming/time/ordered_bytes.hpp"

#include <algorithm>

namespace flint::streaming {

std::string time_window::to_bytes() const {
  std::string out;
  out.reserve(serialized_size);
  append_to(out);
  return out;
}

std::optional<time_window> time_window::from_bytes(std::string_view bytes) {
  if (bytes.size() != serialized_size)
    return std::nullopt;
  return time_window{read_ordered_int64(bytes, 0), read_ordered_int64(bytes, 8)};
}

std::int64_t time_window::get_window_start_with_offset(std::int64_t timestamp, std::int64_t offset,
                                                       std::int64_t size) {
  // Floors also before the aligned point (C++'s % truncates towards zero, as Java's), computed
  // wide so that neither timestamp - offset nor a start before INT64_MIN overflows.
  return time_window_detail::clamp(time_window_detail::floor_start(timestamp, offset, size));
}

std::string time_window::to_string() const {
  return "TimeWindow{start=" + std::to_string(start) + ", end=" + std::to_string(end) + "}";
}

void merge_windows(std::vector<time_window> windows, const merge_callback<time_window>& callback) {
  // Sorting by (start, end) and dropping equal windows keeps groups in order and sets distinct,
  // as Flink's HashSet of merged windows.
  std::sort(windows.begin(), windows.end());
  windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
  std::size_t i = 0;
  while (i < windows.size()) {
    time_window merged = windows[i];
    std::size_t j = i + 1;
    while (j < windows.size() && merged.intersects(windows[j])) {
      merged = merged.cover(windows[j]);
      ++j;
    }
    if (j - i > 1)
      callback(std::vector<time_window>(windows.begin() + static_cast<std::ptrdiff_t>(i),
                                        windows.begin() + static_cast<std::ptrdiff_t>(j)),
               merged);
    i = j;
  }
}

} // namespace flint::streaming
