#pragma once
/// Flink's ContinuousEventTimeTrigger: fires a window early every `interval` of event time (its
/// partial result so far) and once more at its end. The next early fire time is the partitioned
/// state "fire-time"; merged windows keep the earliest.

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

namespace flint::streaming {

template <class T, class W = time_window>
class continuous_event_time_trigger final : public trigger<T, W> {
public:
  static constexpr std::string_view state_name = "fire-time";

  /// interval > 0, else std::invalid_argument.
  static std::unique_ptr<continuous_event_time_trigger> of(std::chrono::milliseconds interval) {
    if (interval.count() <= 0)
      throw std::invalid_argument("ContinuousEventTimeTrigger interval must be > 0");
    return std::unique_ptr<continuous_event_time_trigger>(
      new continuous_event_time_trigger(interval.count()));
  }

  trigger_result on_element(const T&, std::int64_t timestamp, const W& window,
                            trigger_context& ctx) override {
    if (window.max_timestamp() <= ctx.current_watermark())
      return trigger_result::fire;
    ctx.register_event_time_timer(window.max_timestamp());
    if (!ctx.get_int64_state(state_name))
      register_next_fire_time(timestamp - (timestamp % interval_), window, ctx);
    return trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_event_time(std::int64_t time, const W& window,
                               trigger_context& ctx) override {
    if (time == window.max_timestamp())
      return trigger_result::fire;
    auto fire_time = ctx.get_int64_state(state_name);
    if (fire_time && *fire_time == time) {
      ctx.clear_partitioned_state(state_name);
      register_next_fire_time(time, window, ctx);
      return trigger_result::fire;
    }
    return trigger_result::continue_;
  }

  bool can_merge() const override { return true; }
  void on_merge(const W&, on_merge_context& ctx) override {
    ctx.merge_int64_state(state_name, [](std::int64_t a, std::int64_t b) { return std::min(a, b); });
    if (auto next = ctx.get_int64_state(state_name))
      ctx.register_event_time_timer(*next);
  }
  void clear(const W&, trigger_context& ctx) override {
    if (auto fire_time = ctx.get_int64_state(state_name)) {
      ctx.delete_event_time_timer(*fire_time);
      ctx.clear_partitioned_state(state_name);
    }
  }

  std::string to_string() const override {
    return "ContinuousEventTimeTrigger(" + std::to_string(interval_) + ")";
  }
  std::int64_t interval() const { return interval_; }

private:
  explicit continuous_event_time_trigger(std::int64_t interval) : interval_(interval) {}

  void register_next_fire_time(std::int64_t time, const W& window, trigger_context& ctx) {
    // Never past the window's end: the end fires anyway, a later timer would only linger.
    auto next = std::min(time + interval_, window.max_timestamp());
    ctx.put_int64_state(state_name, next);
    ctx.register_event_time_timer(next);
  }

  std::int64_t interval_;
};

} // namespace flint::streaming
