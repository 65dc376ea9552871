#pragma once
/// Flink's MergingWindowSet: the in-flight windows of one key of a merging assigner (sessions),
/// each mapped to its state window — the window whose namespace holds the contents. When windows
/// merge, the result takes over one merged window's state window and the others' contents are
/// merged into it, so contents never move for the window that grows.
///
/// The window operator keeps the mapping in keyed state, one value per key: restore() from it
/// before an element or timer of the key, persist() back after.

#include "runtime/common/expected.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::streaming {

template <class W>
class merging_window_set {
public:
  /// Called once per merge (Flink's MergingWindowSet.MergeFunction): `merged_windows` (never the
  /// added window itself, which had no state) became `merge_result`, whose state window is
  /// `state_window_result`; the contents of `merged_state_windows` are to be merged into it.
  using merge_function =
    std::function<void(const W& merge_result, const std::vector<W>& merged_windows,
                       const W& state_window_result, const std::vector<W>& merged_state_windows)>;

  /// No windows in flight, for `assigner` (merging; it must outlive the set).
  explicit merging_window_set(const window_assigner<W>& assigner) : assigner_(&assigner) {}

  /// The set persisted as `bytes` (empty: no windows); errc::malformed_message for bytes that
  /// are not a mapping.
  static expected<merging_window_set> restore(const window_assigner<W>& assigner,
                                              std::string_view bytes) {
    constexpr auto pair_size = 2 * W::serialized_size;
    if (bytes.size() % pair_size != 0)
      return make_error(errc::malformed_message,
                        "merging window set: " + std::to_string(bytes.size()) +
                          " bytes are not window pairs of " + std::to_string(pair_size));
    merging_window_set set(assigner);
    for (std::size_t pos = 0; pos < bytes.size(); pos += pair_size) {
      auto window = W::from_bytes(bytes.substr(pos, W::serialized_size));
      auto state_window = W::from_bytes(bytes.substr(pos + W::serialized_size, W::serialized_size));
      if (!window || !state_window)
        return make_error(errc::malformed_message, "merging window set: a malformed window");
      set.mapping_.insert_or_assign(*window, *state_window);
    }
    set.initial_mapping_ = set.mapping_;
    return set;
  }

  /// The mapping's bytes, when it changed since the restore or the last persist (Flink writes
  /// the state only then); none otherwise. Empty bytes: no windows left.
  std::optional<std::string> persist() {
    if (mapping_ == initial_mapping_)
      return std::nullopt;
    initial_mapping_ = mapping_;
    return to_bytes();
  }

  /// The mapping's bytes: (window, state window) pairs in window order.
  std::string to_bytes() const {
    std::string out;
    out.reserve(mapping_.size() * 2 * W::serialized_size);
    for (const auto& [window, state_window] : mapping_) {
      window.append_to(out);
      state_window.append_to(out);
    }
    return out;
  }

  /// The state window of in-flight `window`; none when it is not in flight.
  std::optional<W> get_state_window(const W& window) const {
    auto it = mapping_.find(window);
    if (it == mapping_.end())
      return std::nullopt;
    return it->second;
  }

  /// Removes `window` (fired and purged, or cleaned up); it must be in flight.
  void retire_window(const W& window) {
    if (mapping_.erase(window) == 0)
      throw std::logic_error("Window " + window.to_string() + " is not in in-flight window set.");
  }

  /// Adds `new_window`, merging it and in-flight windows as the assigner says, and returns the
  /// window it ended up in: itself, or the merge result holding it. Elements and trigger calls go
  /// to that window only, so a new window swallowed at once is never seen.
  W add_window(const W& new_window, const merge_function& merge) {
    std::vector<W> windows;
    windows.reserve(mapping_.size() + 1);
    for (const auto& entry : mapping_)
      windows.push_back(entry.first);
    windows.push_back(new_window);

    std::vector<std::pair<W, std::vector<W>>> merge_results;
    assigner_->merge_windows(windows, [&](const std::vector<W>& to_merge, const W& result) {
      merge_results.emplace_back(result, to_merge);
    });

    W result_window = new_window;
    bool merged_new_window = false;
    for (auto& [merge_result, merged_windows] : merge_results) {
      if (auto it = std::find(merged_windows.begin(), merged_windows.end(), new_window);
          it != merged_windows.end()) {
        merged_windows.erase(it);
        merged_new_window = true;
        result_window = merge_result;
      }
      // Any merged window's state window serves; the first keeps it deterministic.
      W state_window_result = mapping_.at(merged_windows.front());
      std::vector<W> merged_state_windows;
      for (const auto& merged : merged_windows) {
        if (auto it = mapping_.find(merged); it != mapping_.end()) {
          merged_state_windows.push_back(it->second);
          mapping_.erase(it);
        }
      }
      mapping_.insert_or_assign(merge_result, state_window_result);
      if (auto it = std::find(merged_state_windows.begin(), merged_state_windows.end(),
                              state_window_result);
          it != merged_state_windows.end())
        merged_state_windows.erase(it);
      // A new window inside one in-flight window only: nothing to merge, the window stays.
      bool swallowed_only = merged_windows.size() == 1 && merged_windows.front() == merge_result;
      if (!swallowed_only)
        merge(merge_result, merged_windows, state_window_result, merged_state_windows);
    }

    // A window of its own. try_emplace, where Flink puts: a new window equal to an in-flight one
    // (dynamic gaps can make one) keeps the state window it has.
    if (merge_results.empty() || (result_window == new_window && !merged_new_window))
      mapping_.try_emplace(result_window, result_window);
    return result_window;
  }

  /// The in-flight windows and their state windows.
  const std::map<W, W>& mapping() const { return mapping_; }
  bool empty() const { return mapping_.empty(); }

private:
  const window_assigner<W>* assigner_;
  std::map<W, W> mapping_;
  /// As restored or last persisted, so that persist writes only a change.
  std::map<W, W> initial_mapping_;
};

} // namespace flint::streaming
