#pragma once
/// Flink's GlobalWindows: every element of a key in the one global_window, which fires only by a
/// trigger the user sets (its default trigger never fires), e.g. count_trigger.

#include "runtime/streaming/windowing/global_window.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

namespace flint::streaming {

class global_windows final : public window_assigner<global_window> {
public:
  static global_windows create() { return {}; }

  void append_windows(std::int64_t, std::int64_t, std::vector<global_window>& out) const override {
    out.push_back(global_window{});
  }
  bool is_event_time() const override { return false; }
  default_trigger_kind default_trigger() const override { return default_trigger_kind::never; }
  std::string to_string() const override { return "GlobalWindows()"; }
};

} // namespace flint::streaming
