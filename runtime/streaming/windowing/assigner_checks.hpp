#pragma once
// Private to the assigners' sources: the argument and record checks they share.

#include "runtime/streaming/windowing/window_assigner.hpp"

#include <cstdint>
#include <stdexcept>

namespace flint::streaming {

/// |value| without overflow for the smallest int64 (which is then never below a size).
inline std::int64_t abs_of(std::int64_t value) {
  if (value == std::numeric_limits<std::int64_t>::min())
    return std::numeric_limits<std::int64_t>::max();
  return value < 0 ? -value : value;
}

/// An event-time assigner got a record without a timestamp: the job forgot its watermark
/// strategy, which fails the job as in Flink.
inline void check_has_timestamp(std::int64_t timestamp) {
  if (timestamp == no_timestamp)
    throw std::runtime_error("Record has Long.MIN_VALUE timestamp (= no timestamp marker). Did "
                             "you forget to call 'assign_timestamps_and_watermarks(...)'?");
}

} // namespace flint::streaming
