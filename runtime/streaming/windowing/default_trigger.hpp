#pragma once
/// The trigger an assigner's windows fire by unless the user sets one
/// (WindowAssigner.getDefaultTrigger), for the operator's element type T.

#include "runtime/streaming/windowing/event_time_trigger.hpp"
#include "runtime/streaming/windowing/never_trigger.hpp"
#include "runtime/streaming/windowing/processing_time_trigger.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <memory>

namespace flint::streaming {

template <class T, class W>
std::unique_ptr<trigger<T, W>> make_default_trigger(default_trigger_kind kind) {
  switch (kind) {
    case default_trigger_kind::event_time:
      return event_time_trigger<T, W>::create();
    case default_trigger_kind::processing_time:
      return processing_time_trigger<T, W>::create();
    case default_trigger_kind::never:
      break;
  }
  return never_trigger<T, W>::create();
}

template <class T, class W>
std::unique_ptr<trigger<T, W>> make_default_trigger(const window_assigner<W>& assigner) {
  return make_default_trigger<T, W>(assigner.default_trigger());
}

} // namespace flint::streaming
