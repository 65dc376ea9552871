#include "runtime/streaming/windowing/trigger.hpp"

namespace flint::streaming {

const char* to_string(trigger_result r) {
  switch (r) {
    case trigger_result::continue_:
      return "CONTINUE";
    case trigger_result::fire:
      return "FIRE";
    case trigger_result::purge:
      return "PURGE";
    case trigger_result::fire_and_purge:
      return "FIRE_AND_PURGE";
  }
  return "?";
}

} // namespace flint::streaming
