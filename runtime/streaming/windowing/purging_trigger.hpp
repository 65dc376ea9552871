#pragma once
/// Flink's PurgingTrigger: turns every FIRE of the trigger it wraps into FIRE_AND_PURGE, so each
/// firing sees only the elements since the last one.

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <memory>
#include <utility>

namespace flint::streaming {

template <class T, class W = time_window>
class purging_trigger final : public trigger<T, W> {
public:
  static std::unique_ptr<purging_trigger> of(std::unique_ptr<trigger<T, W>> nested) {
    return std::unique_ptr<purging_trigger>(new purging_trigger(std::move(nested)));
  }

  trigger_result on_element(const T& element, std::int64_t timestamp, const W& window,
                            trigger_context& ctx) override {
    return purging(nested_->on_element(element, timestamp, window, ctx));
  }
  trigger_result on_processing_time(std::int64_t time, const W& window,
                                    trigger_context& ctx) override {
    return purging(nested_->on_processing_time(time, window, ctx));
  }
  trigger_result on_event_time(std::int64_t time, const W& window,
                               trigger_context& ctx) override {
    return purging(nested_->on_event_time(time, window, ctx));
  }

  bool can_merge() const override { return nested_->can_merge(); }
  void on_merge(const W& window, on_merge_context& ctx) override { nested_->on_merge(window, ctx); }
  void clear(const W& window, trigger_context& ctx) override { nested_->clear(window, ctx); }

  std::string to_string() const override { return "PurgingTrigger(" + nested_->to_string() + ")"; }
  const trigger<T, W>& nested_trigger() const { return *nested_; }

private:
  explicit purging_trigger(std::unique_ptr<trigger<T, W>> nested) : nested_(std::move(nested)) {}
  static trigger_result purging(trigger_result r) {
    return is_fire(r) ? trigger_result::fire_and_purge : r;
  }
  std::unique_ptr<trigger<T, W>> nested_;
};

} // namespace flint::streaming
