#pragma once
/// Flink's ProcessingTimeTrigger, the default of processing-time assigners: fires once the clock
/// passes the window's end.

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W = time_window>
class processing_time_trigger final : public trigger<T, W> {
public:
  static std::unique_ptr<processing_time_trigger> create() {
    return std::make_unique<processing_time_trigger>();
  }

  trigger_result on_element(const T&, std::int64_t, const W& window,
                            trigger_context& ctx) override {
    ctx.register_processing_time_timer(window.max_timestamp());
    return trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::fire;
  }
  trigger_result on_event_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }

  bool can_merge() const override { return true; }
  void on_merge(const W& window, on_merge_context& ctx) override {
    if (window.max_timestamp() > ctx.current_processing_time())
      ctx.register_processing_time_timer(window.max_timestamp());
  }
  void clear(const W& window, trigger_context& ctx) override {
    ctx.delete_processing_time_timer(window.max_timestamp());
  }

  std::string to_string() const override { return "ProcessingTimeTrigger()"; }
};

} // namespace flint::streaming
