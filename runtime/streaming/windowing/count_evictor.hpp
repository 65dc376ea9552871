#pragma once
/// Flink's CountEvictor: keeps at most the last `max_count` elements of a window, before the
/// window function (default) or after it.

#include "runtime/streaming/windowing/evictor.hpp"
#include "runtime/streaming/windowing/time_window.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W = time_window>
class count_evictor final : public evictor<T, W> {
public:
  static std::unique_ptr<count_evictor> of(std::int64_t max_count, bool do_evict_after = false) {
    return std::unique_ptr<count_evictor>(new count_evictor(max_count, do_evict_after));
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
    return "CountEvictor(" + std::to_string(max_count_) + ")";
  }

private:
  count_evictor(std::int64_t max_count, bool do_evict_after)
    : max_count_(max_count), do_evict_after_(do_evict_after) {}

  void evict(std::vector<timestamped_value<T>>& elements) const {
    auto size = static_cast<std::int64_t>(elements.size());
    if (size <= max_count_)
      return;
    // The oldest go: the first size - max_count in arrival order.
    elements.erase(elements.begin(), elements.begin() + (size - max_count_));
  }

  std::int64_t max_count_;
  bool do_evict_after_;
};

} // namespace flint::streaming
