#include "runtime/metrics/meter_view.hpp"

namespace flint::metrics {

double meter_view::rate(clock::time_point now, std::int64_t count) {
  if (samples_.empty() || now - samples_.back().first >= std::chrono::seconds(1))
    samples_.emplace_back(now, count);
  // Keep one sample at or before the span's start, so the rate covers the whole span.
  while (samples_.size() > 1 && samples_[1].first <= now - span_)
    samples_.pop_front();
  const auto& [since, then] = samples_.front();
  auto elapsed = std::chrono::duration<double>(now - since).count();
  if (elapsed < 1.0)
    return 0.0;
  auto delta = static_cast<double>(count - then);
  return delta < 0 ? 0.0 : delta / elapsed;
}

} // namespace flint::metrics
