#pragma once
/// Flink's KeyedStream.intervalJoin: `left.interval_join(right).between(lower, upper)` joins each
/// left record at time t with the right records of its key in [t + lower, t + upper], both bounds
/// inclusive unless `lower_bound_exclusive()` / `upper_bound_exclusive()`; `process` runs the
/// user's ProcessJoinFunction on each pair.

#include "api/connected_streams.hpp"
#include "api/functions.hpp"
#include "runtime/streaming/operators/two_input/interval_join_operator.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace flint::api {

template <class T>
class data_stream;

template <class L, class R, class Out>
using process_join_function = streaming::process_join_function<L, R, Out>;
using interval_join_context = streaming::interval_join_context;

template <class K, class L, class R, class Out, class F>
class interval_join_factory : public named_operator_factory {
public:
  interval_join_factory(F fn, std::function<K(const L&)> left_key,
                        std::function<K(const R&)> right_key, streaming::interval_join_bounds bounds)
    : named_operator_factory("interval_join"),
      fn(std::move(fn)),
      left_key(std::move(left_key)),
      right_key(std::move(right_key)),
      bounds(std::move(bounds)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::interval_join_operator<K, L, R, Out>>(
      std::make_unique<F>(fn), left_key, right_key, bounds, ctx, streaming::make_output<Out>(ctx));
  }
  F fn;
  std::function<K(const L&)> left_key;
  std::function<K(const R&)> right_key;
  streaming::interval_join_bounds bounds;
};

/// The join with its bounds (Flink's IntervalJoined).
template <class L, class R, class K>
class interval_joined {
public:
  interval_joined(stream_execution_environment* env, std::shared_ptr<graph::transformation> left,
                  std::shared_ptr<graph::transformation> right, std::function<K(const L&)> left_key,
                  std::function<K(const R&)> right_key, std::int64_t lower, std::int64_t upper)
    : env_(env),
      left_(std::move(left)),
      right_(std::move(right)),
      left_key_(std::move(left_key)),
      right_key_(std::move(right_key)) {
    bounds_.lower = lower;
    bounds_.upper = upper;
  }
  interval_joined& lower_bound_exclusive() {
    lower_exclusive_ = true;
    return *this;
  }
  interval_joined& upper_bound_exclusive() {
    upper_exclusive_ = true;
    return *this;
  }
  /// Left records later than the watermark go to `tag` instead of being dropped.
  interval_joined& side_output_left_late_data(const output_tag<L>& tag) {
    bounds_.left_late_tag = tag.id();
    return *this;
  }
  interval_joined& side_output_right_late_data(const output_tag<R>& tag) {
    bounds_.right_late_tag = tag.id();
    return *this;
  }

  template <class Out, class F>
  data_stream<Out> process(F fn) {
    static_assert(std::is_base_of_v<process_join_function<L, R, Out>, F>,
                  "process takes a class deriving from api::process_join_function<L, R, Out>");
    auto bounds = bounds_;
    if (lower_exclusive_)
      ++bounds.lower;
    if (upper_exclusive_)
      --bounds.upper;
    if (bounds.lower > bounds.upper)
      throw std::invalid_argument("lowerBound <= upperBound must be fulfilled");
    return detail::two_input_transform<Out>(
      env_, left_, right_, "Interval Join",
      std::make_shared<interval_join_factory<K, L, R, Out, F>>(std::move(fn), left_key_,
                                                               right_key_, std::move(bounds)));
  }

private:
  stream_execution_environment* env_;
  std::shared_ptr<graph::transformation> left_;
  std::shared_ptr<graph::transformation> right_;
  std::function<K(const L&)> left_key_;
  std::function<K(const R&)> right_key_;
  streaming::interval_join_bounds bounds_;
  bool lower_exclusive_ = false;
  bool upper_exclusive_ = false;
};

/// `left.interval_join(right)`, waiting for `between` (Flink's KeyedStream.IntervalJoin).
template <class L, class R, class K>
class interval_join_builder {
public:
  interval_join_builder(stream_execution_environment* env, std::shared_ptr<graph::transformation> left,
                std::shared_ptr<graph::transformation> right, std::function<K(const L&)> left_key,
                std::function<K(const R&)> right_key)
    : env_(env),
      left_(std::move(left)),
      right_(std::move(right)),
      left_key_(std::move(left_key)),
      right_key_(std::move(right_key)) {}
  interval_joined<L, R, K> between(std::chrono::milliseconds lower,
                                   std::chrono::milliseconds upper) const {
    if (lower > upper)
      throw std::invalid_argument("lowerBound <= upperBound must be fulfilled");
    return {env_, left_, right_, left_key_, right_key_, lower.count(), upper.count()};
  }

private:
  stream_execution_environment* env_;
  std::shared_ptr<graph::transformation> left_;
  std::shared_ptr<graph::transformation> right_;
  std::function<K(const L&)> left_key_;
  std::function<K(const R&)> right_key_;
};

} // namespace flint::api
