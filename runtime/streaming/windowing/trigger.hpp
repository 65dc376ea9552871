#pragma once
/// Flink's Trigger: decides when a window's contents are evaluated (fired) and when they are
/// dropped (purged). The window operator calls it for each element, each timer it registered and
/// each merge of windows, always for one key and window at a time, which the context is bound to.

#include "runtime/streaming/time/ordered_bytes.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace flint::streaming {

/// Flink's TriggerResult.
enum class trigger_result {
  /// Nothing happens to the window.
  continue_,
  /// Evaluates the window and emits its result; the contents stay.
  fire,
  /// Drops the contents (the window's metadata and timers stay until clear).
  purge,
  /// Evaluates, emits, then drops the contents.
  fire_and_purge,
};

inline bool is_fire(trigger_result r) {
  return r == trigger_result::fire || r == trigger_result::fire_and_purge;
}
inline bool is_purge(trigger_result r) {
  return r == trigger_result::purge || r == trigger_result::fire_and_purge;
}
const char* to_string(trigger_result r);

/// What a trigger may see and do for the current key and window (Flink's Trigger.TriggerContext).
/// The window operator implements it over its timer service and keyed state backend.
class trigger_context {
public:
  virtual ~trigger_context() = default;

  virtual std::int64_t current_processing_time() const = 0;
  virtual std::int64_t current_watermark() const = 0;

  /// Timers of the current key and window; the operator calls the trigger back for them.
  virtual void register_processing_time_timer(std::int64_t time) = 0;
  virtual void register_event_time_timer(std::int64_t time) = 0;
  virtual void delete_processing_time_timer(std::int64_t time) = 0;
  virtual void delete_event_time_timer(std::int64_t time) = 0;

  /// A trigger's own state of the current key and window, by name (Flink's
  /// getPartitionedState, cut to bytes): the value into `value`, false when there is none.
  virtual bool get_partitioned_state(std::string_view name, std::string& value) = 0;
  virtual void put_partitioned_state(std::string_view name, std::string_view value) = 0;
  virtual void clear_partitioned_state(std::string_view name) = 0;

  /// The int64 state `name` (a counter, a fire time), none when unset.
  std::optional<std::int64_t> get_int64_state(std::string_view name) {
    std::string bytes;
    if (!get_partitioned_state(name, bytes) || bytes.size() != 8)
      return std::nullopt;
    return read_ordered_int64(bytes, 0);
  }
  void put_int64_state(std::string_view name, std::int64_t value) {
    std::string bytes;
    append_ordered_int64(bytes, value);
    put_partitioned_state(name, bytes);
  }
};

/// The context of Trigger.onMerge: the current window is the merge result, and the trigger's
/// state of the windows merged into it can be combined into it (Flink's OnMergeContext).
class on_merge_context : public trigger_context {
public:
  /// Combines two values of one state into one (Flink's ReduceFunction of a
  /// ReducingStateDescriptor).
  using bytes_reduce = std::function<std::string(std::string_view, std::string_view)>;

  /// Moves state `name` of every merged window into the merge result, combined by `reduce`
  /// (the result's own value, if any, included); the merged windows' values are cleared.
  virtual void merge_partitioned_state(std::string_view name, const bytes_reduce& reduce) = 0;

  /// merge_partitioned_state over int64 values.
  void merge_int64_state(std::string_view name,
                         const std::function<std::int64_t(std::int64_t, std::int64_t)>& reduce) {
    merge_partitioned_state(name, [&](std::string_view a, std::string_view b) {
      std::string out;
      append_ordered_int64(out, reduce(read_ordered_int64(a, 0), read_ordered_int64(b, 0)));
      return out;
    });
  }
};

/// Flink's Trigger<T, W>. Implementations hold only configuration: whatever they remember of a
/// window goes into the partitioned state, so that it is checkpointed and rescaled with the
/// window.
template <class T, class W>
class trigger {
public:
  virtual ~trigger() = default;

  /// For each element added to `window`, with the element's timestamp.
  virtual trigger_result on_element(const T& element, std::int64_t timestamp, const W& window,
                                    trigger_context& ctx) = 0;
  /// For a processing-time timer of this window set through the context.
  virtual trigger_result on_processing_time(std::int64_t time, const W& window,
                                            trigger_context& ctx) = 0;
  /// For an event-time timer of this window set through the context.
  virtual trigger_result on_event_time(std::int64_t time, const W& window,
                                       trigger_context& ctx) = 0;

  /// Whether the trigger supports merging windows (session windows need it).
  virtual bool can_merge() const { return false; }
  /// Windows merged into `window`: combine their state and set the timers `window` needs.
  virtual void on_merge(const W& window, on_merge_context& ctx) {
    (void)window;
    (void)ctx;
    throw std::logic_error("this trigger does not support merging");
  }
  /// The window is dropped: delete its timers and state.
  virtual void clear(const W& window, trigger_context& ctx) = 0;

  /// For logs and the job's plan.
  virtual std::string to_string() const { return "Trigger"; }
};

} // namespace flint::streaming
