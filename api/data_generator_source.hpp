#pragma once
/// Flink's DataGeneratorSource and RateLimiterStrategy, for `env.from_source(source,
/// watermark_strategy, name)`: records made from their index by a generator function, a given
/// count of them or without end, optionally paced:
///
///     api::data_generator_source<click> clicks(
///       [](std::int64_t i) { return click_at(i); }, api::unbounded_count,
///       api::rate_limiter_strategy::per_second(2000));
///     env.from_source(clicks,
///                     api::watermark_strategy<click>::for_bounded_out_of_orderness(500ms)
///                       .with_timestamp_assigner([](const click& c) { return c.at; }),
///                     "Clicks");
///
/// The watermark strategy runs in the source per split (streaming::data_generator_source).

#include "api/functions.hpp"
#include "api/stream_execution_environment.hpp"
#include "api/watermark_strategy.hpp"
#include "runtime/streaming/operators/data_generator_source.hpp"

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace flint::api {

using streaming::unbounded_count;

/// How fast a data generator source emits (Flink's RateLimiterStrategy).
class rate_limiter_strategy {
public:
  /// As fast as the tasks take records (Flink's noOp).
  static rate_limiter_strategy no_op() { return rate_limiter_strategy(0, false); }
  /// `records_per_second` for the whole source, shared evenly by its subtasks (Flink's
  /// perSecond).
  static rate_limiter_strategy per_second(double records_per_second) {
    return rate_limiter_strategy(checked(records_per_second), false);
  }
  /// `records_per_second` for each subtask.
  static rate_limiter_strategy per_second_per_subtask(double records_per_second) {
    return rate_limiter_strategy(checked(records_per_second), true);
  }
  /// One subtask's rate at `parallelism`; 0: unlimited.
  double rate_for(int parallelism) const {
    return per_subtask_ || parallelism <= 0 ? rate_ : rate_ / parallelism;
  }

private:
  rate_limiter_strategy(double rate, bool per_subtask) : rate_(rate), per_subtask_(per_subtask) {}
  static double checked(double rate) {
    if (!(rate > 0))
      throw std::invalid_argument("The rate of a rate limiter must be positive.");
    return rate;
  }
  double rate_;
  bool per_subtask_;
};

/// Builds a data generator source in each subtask with the strategy's timestamp assigner and a
/// watermark generator per split.
template <class T>
class data_generator_source_factory : public named_operator_factory {
public:
  data_generator_source_factory(std::function<T(std::int64_t)> generator, std::int64_t count,
                                rate_limiter_strategy rate, int splits_per_subtask,
                                watermark_strategy<T> strategy)
    : named_operator_factory("source.data_generator"),
      generator(std::move(generator)),
      count(count),
      rate(rate),
      splits_per_subtask(splits_per_subtask),
      strategy(std::move(strategy)) {}

  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    auto* processing_time = ctx.processing_time;
    auto watermarks = [strategy = strategy, processing_time] {
      return strategy.create_generator([processing_time]() -> std::int64_t {
        return processing_time ? processing_time->current_processing_time() : 0;
      });
    };
    streaming::data_generator_options options{count, rate.rate_for(ctx.parallelism),
                                              splits_per_subtask};
    return std::make_unique<streaming::data_generator_source<T>>(
      generator, options, strategy.assigner(), std::move(watermarks), ctx,
      streaming::make_output<T>(ctx));
  }

  std::function<T(std::int64_t)> generator;
  std::int64_t count;
  rate_limiter_strategy rate;
  int splits_per_subtask;
  watermark_strategy<T> strategy;
};

/// Flink's DataGeneratorSource<OUT>: `generator(index)` for index 0 .. count-1 (or without end:
/// `unbounded_count`), the indices spread over the subtasks' splits.
template <class T>
class data_generator_source {
public:
  using output_type = T;

  template <class F>
    requires std::is_invocable_r_v<T, F&, std::int64_t>
  data_generator_source(F generator, std::int64_t count,
                        rate_limiter_strategy rate = rate_limiter_strategy::no_op())
    : generator_(std::move(generator)),
      count_(count),
      rate_(rate) {
    if (count < 0)
      throw std::invalid_argument("The count of a DataGeneratorSource cannot be negative.");
  }

  /// Each subtask starts with `n` splits, each with its own watermark generator (the subtask's
  /// watermark is their minimum). 1 by default.
  data_generator_source& with_splits_per_subtask(int n) {
    if (n < 1)
      throw std::invalid_argument("A DataGeneratorSource needs one split per subtask at least.");
    splits_per_subtask_ = n;
    return *this;
  }

  std::int64_t count() const noexcept { return count_; }

  /// What `from_source` adds to the graph.
  std::shared_ptr<const graph::operator_factory> create_factory(
    const watermark_strategy<T>& strategy) const {
    return std::make_shared<data_generator_source_factory<T>>(generator_, count_, rate_,
                                                              splits_per_subtask_, strategy);
  }

private:
  std::function<T(std::int64_t)> generator_;
  std::int64_t count_;
  rate_limiter_strategy rate_;
  int splits_per_subtask_ = 1;
};

template <class F>
data_generator_source(F, std::int64_t)
  -> data_generator_source<std::invoke_result_t<F&, std::int64_t>>;
template <class F>
data_generator_source(F, std::int64_t, rate_limiter_strategy)
  -> data_generator_source<std::invoke_result_t<F&, std::int64_t>>;

} // namespace flint::api
