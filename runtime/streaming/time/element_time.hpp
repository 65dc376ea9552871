#pragma once
/// Event time as a task's operators see it: the timestamp of the record being processed (Flink's
/// StreamRecord timestamp, kept beside the value instead of in it) and the watermark bounds.
///
/// One slot per task: the task sets it from the record it deserialized (or an assigner sets it),
/// every operator of the chain reads it while that record passes, and a record writer writes it
/// in front of the record's bytes. An operator emitting from a timer or at a watermark sets it
/// first (a window's output carries the window's max timestamp).

#include <cstdint>
#include <limits>

namespace flint::streaming {

/// Flink's Long.MIN_VALUE watermark: nothing is known yet.
inline constexpr std::int64_t min_watermark = std::numeric_limits<std::int64_t>::min();
/// Flink's Watermark.MAX_WATERMARK: the stream has ended (or its event time is over).
inline constexpr std::int64_t max_watermark = std::numeric_limits<std::int64_t>::max();

struct element_time {
  std::int64_t timestamp = 0;
  bool has_timestamp = false;

  void set(std::int64_t ts) noexcept {
    timestamp = ts;
    has_timestamp = true;
  }
  void erase() noexcept { has_timestamp = false; }
};

} // namespace flint::streaming
