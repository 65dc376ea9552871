#pragma once
/// Flink's SlidingEventTimeWindows and SlidingProcessingTimeWindows: windows of one size that
/// start every `slide`, so an element falls into size / slide of them (each keeps its own copy).

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <chrono>
#include <cstdint>

namespace flint::streaming {

class sliding_event_time_windows final : public window_assigner<time_window> {
public:
  /// Windows of `size` starting at multiples of `slide` plus `offset`; |offset| < slide,
  /// size > 0 and size / slide <= max_window_num (else std::invalid_argument).
  static sliding_event_time_windows of(std::chrono::milliseconds size,
                                       std::chrono::milliseconds slide,
                                       std::chrono::milliseconds offset = {});

  /// Flink's bound on the windows of one element (SlidingEventTimeWindows.MAX_WINDOW_NUM).
  static constexpr std::int64_t max_window_num = 10'000'000;

  /// The windows holding `timestamp`, latest start first; std::runtime_error without one.
  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return true; }
  default_trigger_kind default_trigger() const override { return default_trigger_kind::event_time; }
  std::string to_string() const override;

  std::int64_t size() const { return size_; }
  std::int64_t slide() const { return slide_; }
  std::int64_t offset() const { return offset_; }

private:
  sliding_event_time_windows(std::int64_t size, std::int64_t slide, std::int64_t offset);
  std::int64_t size_;
  std::int64_t slide_;
  std::int64_t offset_;
};

class sliding_processing_time_windows final : public window_assigner<time_window> {
public:
  /// As sliding_event_time_windows::of, over the processing time an element arrives at.
  static sliding_processing_time_windows of(std::chrono::milliseconds size,
                                            std::chrono::milliseconds slide,
                                            std::chrono::milliseconds offset = {});

  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return false; }
  default_trigger_kind default_trigger() const override {
    return default_trigger_kind::processing_time;
  }
  std::string to_string() const override;

  std::int64_t size() const { return size_; }
  std::int64_t slide() const { return slide_; }

private:
  sliding_processing_time_windows(std::int64_t size, std::int64_t slide, std::int64_t offset);
  std::int64_t size_;
  std::int64_t slide_;
  std::int64_t offset_;
};

} // namespace flint::streaming
