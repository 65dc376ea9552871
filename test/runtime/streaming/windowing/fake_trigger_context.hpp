#pragma once
// A trigger context as the window operator will give one, over maps: it records the timers a
// trigger registers and deletes and keeps its partitioned state per window.

#include "runtime/streaming/windowing/evictor.hpp"
#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/trigger.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming::test {

template <class W = time_window>
class fake_trigger_context final : public on_merge_context, public evictor_context {
public:
  std::int64_t watermark = INT64_MIN;
  std::int64_t processing_time = 0;
  /// The window the trigger is called for.
  W window{};
  /// For on_merge: the windows merged into `window`.
  std::vector<W> merged_windows;

  std::set<std::int64_t> event_timers;
  std::set<std::int64_t> processing_timers;
  /// Every timer call in order: "+event 9", "-processing 4", ...
  std::vector<std::string> calls;
  std::map<std::pair<W, std::string>, std::string> state;

  std::int64_t current_processing_time() const override { return processing_time; }
  std::int64_t current_watermark() const override { return watermark; }

  void register_processing_time_timer(std::int64_t time) override {
    processing_timers.insert(time);
    calls.push_back("+processing " + std::to_string(time));
  }
  void register_event_time_timer(std::int64_t time) override {
    event_timers.insert(time);
    calls.push_back("+event " + std::to_string(time));
  }
  void delete_processing_time_timer(std::int64_t time) override {
    processing_timers.erase(time);
    calls.push_back("-processing " + std::to_string(time));
  }
  void delete_event_time_timer(std::int64_t time) override {
    event_timers.erase(time);
    calls.push_back("-event " + std::to_string(time));
  }

  bool get_partitioned_state(std::string_view name, std::string& value) override {
    auto it = state.find({window, std::string(name)});
    if (it == state.end())
      return false;
    value = it->second;
    return true;
  }
  void put_partitioned_state(std::string_view name, std::string_view value) override {
    state[{window, std::string(name)}] = std::string(value);
  }
  void clear_partitioned_state(std::string_view name) override {
    state.erase({window, std::string(name)});
  }

  void merge_partitioned_state(std::string_view name, const bytes_reduce& reduce) override {
    for (const auto& merged : merged_windows) {
      auto it = state.find({merged, std::string(name)});
      if (it == state.end() || merged == window)
        continue;
      auto value = std::move(it->second);
      state.erase(it);
      auto [target, inserted] = state.try_emplace({window, std::string(name)}, value);
      if (!inserted)
        target->second = reduce(target->second, value);
    }
  }

  std::optional<std::int64_t> int64_state(const W& w, std::string_view name) const {
    auto it = state.find({w, std::string(name)});
    if (it == state.end())
      return std::nullopt;
    return read_ordered_int64(it->second, 0);
  }
};

} // namespace flint::streaming::test
