#pragma once
/// Flink's TimeEvictor: keeps the elements of the last `window_size` of event time, counted back
/// from the newest element's timestamp (elements at or before max - window_size go), before the
/// window function (default) or after it. A window whose first element has no timestamp is left
/// as it is.

#include "runtime/streaming/windowing/evictor.hpp"
#include "runtime/streaming/windowing/time_window.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

namespace flint::streaming {

template <class T, class W = time_window>
class time_evictor final : public evictor<T, W> {
public:
  static std::unique_ptr<time_evictor> of(std::chrono::milliseconds window_size,
                                          bool do_evict_after = false) {
    return std::unique_ptr<time_evictor>(new time_evictor(window_size.count(), do_evict_after));
  }

  void evict_before(std::vector<timestamped_value<T>>& elements, const W&,
                    const evictor_context&) override {
    if (!do_evict_after_)
      evict(elements);
  }
  void evict_after(std::vector<timestamped_value<T>>& elements, const W&,
                   const evictor_context&) override {
    if (do_evict_after_)
      evict(elements);
  }
  std::string to_string() const override {
    return "TimeEvictor(" + std::to_string(window_size_) + ")";
  }

private:
  time_evictor(std::int64_t window_size, bool do_evict_after)
    : window_size_(window_size), do_evict_after_(do_evict_after) {}

  void evict(std::vector<timestamped_value<T>>& elements) const {
    // As Flink, the first element tells whether the window's elements carry timestamps.
    if (elements.empty() || !elements.front().has_timestamp)
      return;
    auto newest = std::numeric_limits<std::int64_t>::min();
    for (const auto& e : elements)
      newest = std::max(newest, e.timestamp);
    auto cutoff = newest - window_size_;
    std::erase_if(elements, [&](const timestamped_value<T>& e) { return e.timestamp <= cutoff; });
  }

  std::int64_t window_size_;
  bool do_evict_after_;
};

} // namespace flint::streaming
