#pragma once
/// Flink's Evictor: removes elements from a window's contents before and/or after the window
/// function runs on a firing. A window with an evictor keeps every element (no pre-aggregation),
/// each with its timestamp.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming {

/// Flink's TimestampedValue: an element of a window's contents and its event time, if any.
template <class T>
struct timestamped_value {
  T value;
  std::int64_t timestamp = 0;
  bool has_timestamp = false;

  timestamped_value() = default;
  explicit timestamped_value(T v) : value(std::move(v)) {}
  timestamped_value(T v, std::int64_t ts) : value(std::move(v)), timestamp(ts), has_timestamp(true) {}
  friend bool operator==(const timestamped_value&, const timestamped_value&) = default;
};

/// What an evictor may see of time (Flink's Evictor.EvictorContext).
class evictor_context {
public:
  virtual ~evictor_context() = default;
  virtual std::int64_t current_processing_time() const = 0;
  virtual std::int64_t current_watermark() const = 0;
};

/// Flink's Evictor<T, W>. `elements` are the window's contents in arrival order; the operator
/// writes back what remains.
template <class T, class W>
class evictor {
public:
  virtual ~evictor() = default;
  virtual void evict_before(std::vector<timestamped_value<T>>& elements, const W& window,
                            const evictor_context& ctx) = 0;
  virtual void evict_after(std::vector<timestamped_value<T>>& elements, const W& window,
                           const evictor_context& ctx) = 0;
  /// For logs and the job's plan.
  virtual std::string to_string() const { return "Evictor"; }
};

} // namespace flint::streaming
