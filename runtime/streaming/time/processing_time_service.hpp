#pragma once
/// Processing time for a task's operators (Flink's ProcessingTimeService): the wall clock in
/// milliseconds and callbacks at given times, run on the task's thread between records, never
/// concurrently with them. The task drives a queued service from its actor's timers; a test
/// harness drives one by hand.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>

namespace flint::streaming {

class processing_time_service {
public:
  using callback = std::function<void(std::int64_t time)>;
  virtual ~processing_time_service() = default;
  /// Milliseconds since the epoch (or the harness's time).
  virtual std::int64_t current_processing_time() const = 0;
  /// Calls `fn(time)` once the processing time reached `time` (at once on the next turn when it
  /// already has).
  virtual void register_timer(std::int64_t time, callback fn) = 0;
};

/// The callbacks in time order; `fire_due` runs those whose time came. The owner says what time
/// it is and arranges to be called back at `next_time()`.
class queued_processing_time_service : public processing_time_service {
public:
  using clock_fn = std::function<std::int64_t()>;
  /// `clock`: the current time; `on_earlier`: called when a timer earlier than every queued one
  /// was registered (the owner re-arms its wake-up).
  explicit queued_processing_time_service(clock_fn clock,
                                          std::function<void(std::int64_t)> on_earlier = {})
    : clock_(std::move(clock)),
      on_earlier_(std::move(on_earlier)) {}

  std::int64_t current_processing_time() const override { return clock_(); }
  void register_timer(std::int64_t time, callback fn) override {
    bool earliest = queue_.empty() || time < queue_.begin()->first;
    queue_.emplace(time, std::move(fn));
    if (earliest && on_earlier_)
      on_earlier_(time);
  }
  /// Runs every callback due at `now` (also those they register that are due), in time order.
  /// Returns how many ran.
  std::size_t fire_due(std::int64_t now) {
    std::size_t fired = 0;
    while (!queue_.empty() && queue_.begin()->first <= now) {
      auto node = queue_.extract(queue_.begin());
      node.mapped()(node.key());
      ++fired;
    }
    return fired;
  }
  std::optional<std::int64_t> next_time() const {
    if (queue_.empty())
      return std::nullopt;
    return queue_.begin()->first;
  }
  bool empty() const noexcept { return queue_.empty(); }
  void clear() { queue_.clear(); }

private:
  clock_fn clock_;
  std::function<void(std::int64_t)> on_earlier_;
  std::multimap<std::int64_t, callback> queue_;
};

} // namespace flint::streaming
