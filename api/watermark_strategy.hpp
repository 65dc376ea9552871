#pragma once
/// Flink's WatermarkStrategy: how a stream gets its event timestamps (an assigner) and its
/// watermarks (a generator, optionally with idleness), used by
/// `data_stream::assign_timestamps_and_watermarks` and by the sources that take one.

#include "api/functions.hpp"
#include "runtime/streaming/time/timestamps_and_watermarks_operator.hpp"
#include "runtime/streaming/time/watermark_generator.hpp"

#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace flint::api {

using streaming::watermark_generator;
using streaming::watermark_output;

template <class T>
class watermark_strategy {
public:
  using generator_supplier = std::function<std::unique_ptr<watermark_generator<T>>()>;
  /// Flink's SerializableTimestampAssigner: (element, the timestamp it came with or
  /// Long.MIN_VALUE) -> its event timestamp.
  using timestamp_assigner = std::function<std::int64_t(const T&, std::int64_t)>;

  /// Watermarks lag the highest timestamp seen by `bound` (Flink's forBoundedOutOfOrderness).
  static watermark_strategy for_bounded_out_of_orderness(std::chrono::milliseconds bound) {
    auto ms = bound.count();
    return watermark_strategy([ms] {
      return std::make_unique<streaming::bounded_out_of_orderness_watermarks<T>>(ms);
    });
  }
  /// Timestamps only rise (Flink's forMonotonousTimestamps): the bound is zero.
  static watermark_strategy for_monotonous_timestamps() {
    return for_bounded_out_of_orderness(std::chrono::milliseconds(0));
  }
  /// Timestamps, no watermarks (Flink's noWatermarks).
  static watermark_strategy no_watermarks() {
    return watermark_strategy(
      [] { return std::make_unique<streaming::no_watermarks_generator<T>>(); });
  }
  /// A generator of the user's (periodic: emits from on_periodic_emit; punctuated: from
  /// on_event), made once per subtask by `supplier` (Flink's forGenerator).
  static watermark_strategy for_generator(generator_supplier supplier) {
    return watermark_strategy(std::move(supplier));
  }

  /// The element's event timestamp: `f(element)` or `f(element, record_timestamp)`.
  template <class F>
  watermark_strategy with_timestamp_assigner(F f) const {
    auto copy = *this;
    if constexpr (std::is_invocable_r_v<std::int64_t, F&, const T&, std::int64_t>)
      copy.assigner_ = std::move(f);
    else
      copy.assigner_ = [f = std::move(f)](const T& e, std::int64_t) -> std::int64_t {
        return static_cast<std::int64_t>(f(e));
      };
    return copy;
  }
  /// No record for `timeout` of processing time marks the stream idle (Flink's withIdleness).
  watermark_strategy with_idleness(std::chrono::milliseconds timeout) const {
    auto copy = *this;
    copy.idle_timeout_ = timeout.count();
    return copy;
  }

  /// A generator for one subtask; `clock` is its processing time (for idleness).
  std::unique_ptr<watermark_generator<T>> create_generator(
    std::function<std::int64_t()> clock) const {
    auto g = supplier_();
    if (idle_timeout_ > 0)
      g = std::make_unique<streaming::watermarks_with_idleness<T>>(std::move(g), idle_timeout_,
                                                                   std::move(clock));
    return g;
  }
  const timestamp_assigner& assigner() const noexcept { return assigner_; }
  std::int64_t idle_timeout() const noexcept { return idle_timeout_; }

private:
  explicit watermark_strategy(generator_supplier supplier) : supplier_(std::move(supplier)) {}

  generator_supplier supplier_;
  timestamp_assigner assigner_;
  std::int64_t idle_timeout_ = 0;
};

/// `assign_timestamps_and_watermarks`: one timestamps-and-watermarks operator per subtask.
template <class T>
class timestamps_and_watermarks_factory : public named_operator_factory {
public:
  explicit timestamps_and_watermarks_factory(watermark_strategy<T> strategy)
    : named_operator_factory("timestamps_and_watermarks"),
      strategy(std::move(strategy)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    auto* processing_time = ctx.processing_time;
    auto clock = [processing_time]() -> std::int64_t {
      return processing_time ? processing_time->current_processing_time() : 0;
    };
    return std::make_unique<streaming::timestamps_and_watermarks_operator<T>>(
      strategy.assigner(), strategy.create_generator(std::move(clock)), ctx,
      streaming::make_output<T>(ctx));
  }
  watermark_strategy<T> strategy;
};

} // namespace flint::api
