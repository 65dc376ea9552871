#pragma once
/// Flink's EventTimeTrigger, the default of event-time assigners: fires once the watermark passes
/// the window's end, and at once for an element of a window the watermark passed already (a late
/// element within the allowed lateness re-fires its window).

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W = time_window>
class event_time_trigger final : public trigger<T, W> {
public:
  static std::unique_ptr<event_time_trigger> create() {
    return std::make_unique<event_time_trigger>();
  }

  trigger_result on_element(const T&, std::int64_t, const W& window,
                            trigger_context& ctx) override {
    if (window.max_timestamp() <= ctx.current_watermark())
      return trigger_result::fire;
    ctx.register_event_time_timer(window.max_timestamp());
    return trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_event_time(std::int64_t time, const W& window, trigger_context&) override {
    // Other timers of the window (the operator's cleanup timer) must not fire it.
    return time == window.max_timestamp() ? trigger_result::fire : trigger_result::continue_;
  }

  bool can_merge() const override { return true; }
  void on_merge(const W& window, on_merge_context& ctx) override {
    // A merged window that already ended fires through its elements' on_element; a timer at or
    // before the watermark would only fire a second time.
    if (window.max_timestamp() > ctx.current_watermark())
      ctx.register_event_time_timer(window.max_timestamp());
  }
  void clear(const W& window, trigger_context& ctx) override {
    ctx.delete_event_time_timer(window.max_timestamp());
  }

  std::string to_string() const override { return "EventTimeTrigger()"; }
};

} // namespace flint::streaming
