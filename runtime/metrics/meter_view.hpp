#pragma once
/// Flink's MeterView: a counter's rate per second over its last minute, for the `...PerSecond`
/// meters (numRecordsInPerSecond, numBytesOutPerSecond, ...). Flink's view samples the counter
/// every 5 s; Flint's is sampled by its readers (a scrape, a REST read), at most once a second,
/// and the rate is taken between the newest sample and the oldest within the span.

#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>

namespace flint::metrics {

class meter_view {
public:
  using clock = std::chrono::steady_clock;

  /// `span`: how far back the rate looks (Flink's default time span, 60 s).
  explicit meter_view(std::chrono::nanoseconds span = std::chrono::seconds(60)) : span_(span) {}

  /// The rate per second of `count` (a counter read at `now`) over the span; 0 before a second
  /// sample at least one second later.
  double rate(clock::time_point now, std::int64_t count);

private:
  std::chrono::nanoseconds span_;
  /// Samples at least a second apart, oldest first, reaching back over the span.
  std::deque<std::pair<clock::time_point, std::int64_t>> samples_;
};

} // namespace flint::metrics
