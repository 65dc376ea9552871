#pragma once
/// Flink's WindowAssigner: which windows an element belongs to. The built-in assigners look only
/// at the element's timestamp (or the current processing time), so the interface is one per
/// window type W and holds no element type; an assigner that needs the element (a dynamic
/// session gap) implements element_window_assigner<T, W> as well, and the window operator asks
/// through windows_of<T, W>.

#include "runtime/streaming/windowing/merge_callback.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace flint::streaming {

/// Flink's Long.MIN_VALUE timestamp: the record carries none.
inline constexpr std::int64_t no_timestamp = std::numeric_limits<std::int64_t>::min();

/// The trigger an assigner fires its windows by unless the user sets another
/// (WindowAssigner.getDefaultTrigger); make_default_trigger<T, W> builds it.
enum class default_trigger_kind {
  /// event_time_trigger: fires when the watermark passes the window's end.
  event_time,
  /// processing_time_trigger: fires when the clock passes the window's end.
  processing_time,
  /// never_trigger: global windows fire only by a trigger the user sets.
  never,
};

template <class W>
class window_assigner {
public:
  using window_type = W;

  virtual ~window_assigner() = default;

  /// Appends to `out` the windows of an element with event time `timestamp` (no_timestamp when
  /// it has none) arriving at processing time `processing_time`. Appending into the operator's
  /// buffer spares an allocation per record.
  virtual void append_windows(std::int64_t timestamp, std::int64_t processing_time,
                              std::vector<W>& out) const = 0;
  /// The same windows as a new vector.
  std::vector<W> assign_windows(std::int64_t timestamp, std::int64_t processing_time) const {
    std::vector<W> out;
    append_windows(timestamp, processing_time, out);
    return out;
  }
  /// Whether the windows are of event time (fired by watermarks) or processing time.
  virtual bool is_event_time() const = 0;
  virtual default_trigger_kind default_trigger() const = 0;
  /// Whether windows may merge (Flink's MergingWindowAssigner): session windows.
  virtual bool is_merging() const { return false; }
  /// For merging assigners: which of `windows` merge into which.
  virtual void merge_windows(const std::vector<W>& windows,
                             const merge_callback<W>& callback) const {
    (void)windows;
    (void)callback;
  }
  virtual std::string to_string() const = 0;
};

/// An assigner whose windows depend on the element itself (Flink's WindowAssigner<T, W> proper),
/// e.g. a session gap read from the element.
template <class T, class W>
class element_window_assigner : public window_assigner<W> {
public:
  /// Appends the windows of `element` to `out`.
  virtual void append_windows(const T& element, std::int64_t timestamp,
                              std::int64_t processing_time, std::vector<W>& out) const = 0;

  void append_windows(std::int64_t, std::int64_t, std::vector<W>&) const final {
    // The operator must ask through windows_of, which passes the element.
    throw std::logic_error(this->to_string() + " needs the element to assign windows");
  }
  using window_assigner<W>::assign_windows;
  std::vector<W> assign_windows(const T& element, std::int64_t timestamp,
                                std::int64_t processing_time) const {
    std::vector<W> out;
    append_windows(element, timestamp, processing_time, out);
    return out;
  }
};

/// Assigns windows to elements of type T with any assigner of W: passes the element to the
/// assigners that need it. Built once per operator: one cast, not one per record.
template <class T, class W>
class windows_of {
public:
  explicit windows_of(const window_assigner<W>& assigner)
    : assigner_(assigner),
      element_assigner_(dynamic_cast<const element_window_assigner<T, W>*>(&assigner)) {}

  /// Appends the windows of `element` to `out`.
  void operator()(const T& element, std::int64_t timestamp, std::int64_t processing_time,
                  std::vector<W>& out) const {
    if (element_assigner_ != nullptr)
      element_assigner_->append_windows(element, timestamp, processing_time, out);
    else
      assigner_.append_windows(timestamp, processing_time, out);
  }
  std::vector<W> operator()(const T& element, std::int64_t timestamp,
                            std::int64_t processing_time) const {
    std::vector<W> out;
    (*this)(element, timestamp, processing_time, out);
    return out;
  }

private:
  const window_assigner<W>& assigner_;
  const element_window_assigner<T, W>* element_assigner_;
};

} // namespace flint::streaming
