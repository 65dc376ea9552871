#pragma once
/// Flink's GlobalWindows.NeverTrigger, the default of global_windows: never fires, so a global
/// window needs a trigger of the user's.

#include "runtime/streaming/windowing/global_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W = global_window>
class never_trigger final : public trigger<T, W> {
public:
  static std::unique_ptr<never_trigger> create() { return std::make_unique<never_trigger>(); }

  trigger_result on_element(const T&, std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_processing_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  trigger_result on_event_time(std::int64_t, const W&, trigger_context&) override {
    return trigger_result::continue_;
  }
  bool can_merge() const override { return true; }
  void on_merge(const W&, on_merge_context&) override {}
  void clear(const W&, trigger_context&) override {}

  std::string to_string() const override { return "NeverTrigger()"; }
};

} // namespace flint::streaming
