#pragma once
/// Flink's CountTrigger: fires each time a window's element count reaches the maximum, then
/// counts again from zero. The count is the trigger's partitioned state "count"; merged windows
/// add their counts.

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W = time_window>
class count_trigger final : public trigger<T, W> {
public:
  static constexpr std::string_view state_name = "count";

  static std::unique_ptr<count_trigger> of(std::int64_t max_count) {
    return std::unique_ptr<count_trigger>(new count_trigger(max_count));
  }

  trigger_result on_element(const T&, std::int64_t, const W&, trigger_context& ctx) override {
    auto count = ctx.get_int64_state(state_name).value_or(0) + 1;
    if (count >= max_count_) {
      ctx.clear_partitioned_state(state_name);
      return trigger_result::fire;
    }
    ctx.put_int64_state(state_name, count);
    return trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_event_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }

  bool can_merge() const override { return true; }
  void on_merge(const W&, on_merge_context& ctx) override {
    // Flink merges the counts but fires only with the next element, even when the sum already
    // reached the maximum.
    ctx.merge_int64_state(state_name, [](std::int64_t a, std::int64_t b) { return a + b; });
  }
  void clear(const W&, trigger_context& ctx) override { ctx.clear_partitioned_state(state_name); }

  std::string to_string() const override {
    return "CountTrigger(" + std::to_string(max_count_) + ")";
  }
  std::int64_t max_count() const { return max_count_; }

private:
  explicit count_trigger(std::int64_t max_count) : max_count_(max_count) {}
  std::int64_t max_count_;
};

} // namespace flint::streaming
