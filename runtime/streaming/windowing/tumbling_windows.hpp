#pragma once
/// Flink's TumblingEventTimeWindows and TumblingProcessingTimeWindows: back-to-back windows of
/// one size, aligned to the epoch plus an offset (e.g. an offset of -8 h makes daily windows
/// start at midnight in UTC+8).

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <chrono>
#include <cstdint>

namespace flint::streaming {

class tumbling_event_time_windows final : public window_assigner<time_window> {
public:
  /// Windows of `size`, starting at multiples of it plus `offset`; |offset| < size (else
  /// std::invalid_argument, as Flink's IllegalArgumentException).
  static tumbling_event_time_windows of(std::chrono::milliseconds size,
                                        std::chrono::milliseconds offset = {});

  /// Throws std::runtime_error for an element without a timestamp (Flink's message).
  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return true; }
  default_trigger_kind default_trigger() const override { return default_trigger_kind::event_time; }
  std::string to_string() const override;

  std::int64_t size() const { return size_; }
  std::int64_t offset() const { return offset_; }

private:
  tumbling_event_time_windows(std::int64_t size, std::int64_t offset);
  std::int64_t size_;
  std::int64_t offset_;
};

class tumbling_processing_time_windows final : public window_assigner<time_window> {
public:
  /// As tumbling_event_time_windows::of, over the processing time an element arrives at.
  static tumbling_processing_time_windows of(std::chrono::milliseconds size,
                                             std::chrono::milliseconds offset = {});

  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return false; }
  default_trigger_kind default_trigger() const override {
    return default_trigger_kind::processing_time;
  }
  std::string to_string() const override;

  std::int64_t size() const { return size_; }
  std::int64_t offset() const { return offset_; }

private:
  tumbling_processing_time_windows(std::int64_t size, std::int64_t offset);
  std::int64_t size_;
  std::int64_t offset_;
};

} // namespace flint::streaming
