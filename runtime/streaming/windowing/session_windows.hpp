#pragma once
/// Flink's EventTimeSessionWindows, ProcessingTimeSessionWindows and their dynamic-gap variants:
/// each element opens the window [t, t + gap); windows of a key that overlap or touch merge
/// (merging_window_set), so a session ends once no element came for a gap.

#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace flint::streaming {

/// A session gap read from the element (Flink's SessionWindowTimeGapExtractor<T>).
template <class T>
using session_window_time_gap_extractor = std::function<std::chrono::milliseconds(const T&)>;

namespace detail {

/// The element type of a gap extractor `[](const T&) {...}`.
template <class F>
struct gap_extractor_element;
template <class C, class R, class A>
struct gap_extractor_element<R (C::*)(A) const> {
  using type = std::remove_cvref_t<A>;
};
template <class F>
using gap_extractor_element_t = typename gap_extractor_element<decltype(&F::operator())>::type;

/// The session [start, start + gap) of a gap read from an element; gap <= 0 is
/// std::invalid_argument.
time_window session_window(const char* name, std::int64_t start, std::int64_t gap);
/// A fixed gap: gap > 0, else std::invalid_argument.
void check_session_gap(const char* name, std::int64_t gap);

} // namespace detail

template <class T>
class dynamic_event_time_session_windows;
template <class T>
class dynamic_processing_time_session_windows;

class event_time_session_windows final : public window_assigner<time_window> {
public:
  /// Sessions closed by `gap` of silence; gap > 0 (else std::invalid_argument).
  static event_time_session_windows with_gap(std::chrono::milliseconds gap);
  /// Sessions whose gap each element sets, e.g.
  /// `with_dynamic_gap([](const click& c) { return c.premium ? 10min : 1min; })`.
  template <class F>
  static auto with_dynamic_gap(F extractor) {
    using element = detail::gap_extractor_element_t<F>;
    return dynamic_event_time_session_windows<element>(
      session_window_time_gap_extractor<element>(std::move(extractor)));
  }

  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return true; }
  default_trigger_kind default_trigger() const override { return default_trigger_kind::event_time; }
  bool is_merging() const override { return true; }
  void merge_windows(const std::vector<time_window>& windows,
                     const merge_callback<time_window>& callback) const override {
    ::flint::streaming::merge_windows(windows, callback);
  }
  std::string to_string() const override;

  std::int64_t gap() const { return gap_; }

private:
  explicit event_time_session_windows(std::int64_t gap);
  std::int64_t gap_;
};

class processing_time_session_windows final : public window_assigner<time_window> {
public:
  /// As event_time_session_windows, over the processing time elements arrive at.
  static processing_time_session_windows with_gap(std::chrono::milliseconds gap);
  template <class F>
  static auto with_dynamic_gap(F extractor) {
    using element = detail::gap_extractor_element_t<F>;
    return dynamic_processing_time_session_windows<element>(
      session_window_time_gap_extractor<element>(std::move(extractor)));
  }

  void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                      std::vector<time_window>& out) const override;
  bool is_event_time() const override { return false; }
  default_trigger_kind default_trigger() const override {
    return default_trigger_kind::processing_time;
  }
  bool is_merging() const override { return true; }
  void merge_windows(const std::vector<time_window>& windows,
                     const merge_callback<time_window>& callback) const override {
    ::flint::streaming::merge_windows(windows, callback);
  }
  std::string to_string() const override;

  std::int64_t gap() const { return gap_; }

private:
  explicit processing_time_session_windows(std::int64_t gap);
  std::int64_t gap_;
};

/// Flink's DynamicEventTimeSessionWindows<T>.
template <class T>
class dynamic_event_time_session_windows final : public element_window_assigner<T, time_window> {
public:
  explicit dynamic_event_time_session_windows(session_window_time_gap_extractor<T> extractor)
    : extractor_(std::move(extractor)) {}

  using element_window_assigner<T, time_window>::append_windows;
  /// [timestamp, timestamp + gap of `element`); a gap <= 0 is std::invalid_argument.
  void append_windows(const T& element, std::int64_t timestamp, std::int64_t,
                      std::vector<time_window>& out) const override {
    out.push_back(detail::session_window("DynamicEventTimeSessionWindows", timestamp,
                                         extractor_(element).count()));
  }
  bool is_event_time() const override { return true; }
  default_trigger_kind default_trigger() const override { return default_trigger_kind::event_time; }
  bool is_merging() const override { return true; }
  void merge_windows(const std::vector<time_window>& windows,
                     const merge_callback<time_window>& callback) const override {
    ::flint::streaming::merge_windows(windows, callback);
  }
  std::string to_string() const override { return "DynamicEventTimeSessionWindows()"; }

private:
  session_window_time_gap_extractor<T> extractor_;
};

/// Flink's DynamicProcessingTimeSessionWindows<T>.
template <class T>
class dynamic_processing_time_session_windows final
  : public element_window_assigner<T, time_window> {
public:
  explicit dynamic_processing_time_session_windows(session_window_time_gap_extractor<T> extractor)
    : extractor_(std::move(extractor)) {}

  using element_window_assigner<T, time_window>::append_windows;
  /// [processing_time, processing_time + gap of `element`).
  void append_windows(const T& element, std::int64_t, std::int64_t processing_time,
                      std::vector<time_window>& out) const override {
    out.push_back(detail::session_window("DynamicProcessingTimeSessionWindows", processing_time,
                                         extractor_(element).count()));
  }
  bool is_event_time() const override { return false; }
  default_trigger_kind default_trigger() const override {
    return default_trigger_kind::processing_time;
  }
  bool is_merging() const override { return true; }
  void merge_windows(const std::vector<time_window>& windows,
                     const merge_callback<time_window>& callback) const override {
    ::flint::streaming::merge_windows(windows, callback);
  }
  std::string to_string() const override { return "DynamicProcessingTimeSessionWindows()"; }

private:
  session_window_time_gap_extractor<T> extractor_;
};

} // namespace flint::streaming
