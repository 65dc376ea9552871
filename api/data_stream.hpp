#pragma once
/// A stream of records of type T and the operations on it (Flink's DataStream and
/// SingleOutputStreamOperator).

#include "api/data_stream_sink.hpp"
#include "api/functions.hpp"
#include "api/operator_handle.hpp"
#include "api/stream_execution_environment.hpp"
#include "api/watermark_strategy.hpp"
#include "api/connected_streams.hpp"
#include "api/interval_join.hpp"
#include "runtime/graph/transformation.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace flint::api {

template <class T, class K>
class keyed_stream;
template <class T1, class T2, bool Join>
class two_stream_builder;
template <class T, class W>
class all_windowed_stream;

namespace detail {

template <class F, class T, class Out>
concept collector_flat_map = std::is_invocable_v < F,
        const T&, collector<Out>
& > ;

} // namespace detail

/// A handle on the operator that produces the stream; copies refer to the same operator.
template <class T>
class data_stream : public operator_handle<data_stream<T>> {
public:
  using value_type = T;

  data_stream(stream_execution_environment* env, std::shared_ptr<graph::transformation> t)
    : operator_handle<data_stream<T>>(std::move(t)),
      env_(env) {}

  stream_execution_environment& environment() const { return *env_; }

  /// One output per input: `map([](const T& x) { return f(x); })`.
  template <class F>
  auto map(F fn) {
    using out = std::decay_t<std::invoke_result_t<F&, const T&>>;
    return one_input<out>("Map", std::make_shared<map_factory_of<T, out, F>>(std::move(fn)));
  }

  /// Any number of outputs per input, returned as a range:
  /// `flat_map([](const std::string& line) { return split(line); })`.
  template <class F>
  requires std::is_invocable_v<F&, const T&>
  auto flat_map(F fn) {
    using range = std::invoke_result_t<F&, const T&>;
    using out = std::ranges::range_value_t<std::remove_cvref_t<range>>;
    auto wrapped = [fn = std::move(fn)](const T& in, collector<out>& c) mutable {
      for (auto&& value : fn(in))
        c.collect(std::forward<decltype(value)>(value));
    };
    return one_input<out>(
      "Flat Map",
      std::make_shared<flat_map_factory_of<T, out, decltype(wrapped)>>(std::move(wrapped)));
  }

  /// Any number of outputs per input, emitted to a collector:
  /// `flat_map<std::string>([](const std::string& line, collector<std::string>& out) { ... })`.
  template <class Out, class F>
  requires detail::collector_flat_map<F, T, Out> data_stream<Out> flat_map(F fn) {
    return one_input<Out>("Flat Map",
                          std::make_shared<flat_map_factory_of<T, Out, F>>(std::move(fn)));
  }

  /// Keeps the records `predicate` accepts.
  template <class F>
  data_stream<T> filter(F predicate) {
    return one_input<T>("Filter", std::make_shared<filter_factory_of<T, F>>(std::move(predicate)));
  }

  /// Partitions by tuple field `Field` (Flink's `keyBy(int)`).
  template <std::size_t Field>
  keyed_stream<T, std::decay_t<std::tuple_element_t<Field, T>>> key_by();

  /// Partitions by the key a selector returns.
  template <class F>
  keyed_stream<T, std::decay_t<std::invoke_result_t<F&, const T&>>> key_by(F selector);

  /// All records in the windows `assigner` gives, evaluated at parallelism 1 (Flink's
  /// windowAll); see api/all_windowed_stream.hpp.
  template <class A>
  all_windowed_stream<T, typename A::window_type> window_all(A assigner);

  /// Round-robin to all downstream subtasks.
  data_stream<T> rebalance() { return partition({graph::partitioner_kind::rebalance}); }
  /// Round-robin to a subset of downstream subtasks (pointwise).
  data_stream<T> rescale() { return partition({graph::partitioner_kind::rescale}); }
  /// Every record to every downstream subtask.
  data_stream<T> broadcast() { return partition({graph::partitioner_kind::broadcast}); }
  /// Randomly to downstream subtasks.
  data_stream<T> shuffle() { return partition({graph::partitioner_kind::shuffle}); }
  /// To the downstream subtask with the same index; parallelisms must match.
  data_stream<T> forward() { return partition({graph::partitioner_kind::forward}); }
  /// Everything to the first downstream subtask.
  data_stream<T> global() { return partition({graph::partitioner_kind::global}); }

  /// Any partitioner and shuffle mode (Flink's internal `setConnectionType` plus a
  /// PartitionTransformation's ShuffleMode), e.g. a BATCH forward exchange.
  data_stream<T> partition(graph::stream_partitioner partitioner,
                           graph::shuffle_mode mode = graph::shuffle_mode::undefined) {
    auto t = env_->new_transformation(graph::transformation_kind::partition, "Partition",
                                      this->transformation()->parallelism());
    t->add_input(this->transformation());
    t->set_partitioner(std::move(partitioner));
    t->set_shuffle_mode(mode);
    // Not added to the environment: the consumer reaches it through its input (§2.1).
    return data_stream<T>(env_, std::move(t));
  }

  /// This stream and `others` merged into one.
  template <class... Streams>
  data_stream<T> union_with(const Streams&... others) {
    auto t = env_->new_transformation(graph::transformation_kind::union_of, "Union",
                                      this->transformation()->parallelism());
    t->add_input(this->transformation());
    (t->add_input(others.transformation()), ...);
    return data_stream<T>(env_, std::move(t));
  }

  /// Gives each record its event timestamp and the stream its watermarks (Flink's
  /// assignTimestampsAndWatermarks); runs at the input's parallelism, chained to it.
  data_stream<T> assign_timestamps_and_watermarks(watermark_strategy<T> strategy) {
    auto out = transform<T>("Timestamps/Watermarks",
                            std::make_shared<timestamps_and_watermarks_factory<T>>(
                              std::move(strategy)));
    (void)out.transformation()->set_parallelism(this->transformation()->parallelism());
    return out;
  }

  /// This stream and `other` into one two-input operator (Flink's connect).
  template <class U>
  connected_streams<T, U> connect(const data_stream<U>& other) const {
    return connected_streams<T, U>(env_, this->transformation(), other.transformation());
  }

  /// Pairs this stream's elements with `other`'s of the same key and window (Flink's join):
  /// `.where(k1).equal_to(k2).window(assigner).apply(f)`.
  template <class U>
  auto join(const data_stream<U>& other) const {
    return two_stream_builder<T, U, true>(*this, other);
  }
  /// Both streams' elements of one key and window together (Flink's coGroup).
  template <class U>
  auto co_group(const data_stream<U>& other) const {
    return two_stream_builder<T, U, false>(*this, other);
  }

  /// The records this operator emitted to side output `tag` (Flink's getSideOutput), at its
  /// parallelism.
  template <class X>
  data_stream<X> get_side_output(const output_tag<X>& tag) {
    auto t = env_->new_transformation(graph::transformation_kind::side_output,
                                      "SideOutput: " + tag.id(),
                                      this->transformation()->parallelism());
    t->add_input(this->transformation());
    t->set_output_tag(tag.id());
    return data_stream<X>(env_, std::move(t));
  }

  /// Writes every record to standard output.
  data_stream_sink<T> print() {
    return sink("Print to Std. Out", std::make_shared<print_sink_factory<T>>());
  }
  /// Writes every record as a line of text to `path` (Flink's writeAsText; with checkpoints its
  /// FileSink). Without checkpoints an existing `path` refuses the job unless `mode` is
  /// `write_mode::overwrite`.
  data_stream_sink<T> write_as_text(std::string path,
                                    write_mode mode = write_mode::no_overwrite) {
    return sink("Unnamed", std::make_shared<text_sink_factory<T>>(std::move(path), mode));
  }

  /// Adds any one-input operator (Flink's `transform`); the chaining strategy defaults to
  /// ALWAYS.
  template <class Out>
  data_stream<Out> transform(std::string name,
                             std::shared_ptr<const graph::operator_factory> factory,
                             graph::chaining_strategy strategy = graph::chaining_strategy::always) {
    auto t = env_->new_transformation(graph::transformation_kind::one_input, std::move(name),
                                      env_->parallelism());
    t->add_input(this->transformation());
    t->set_factory(std::move(factory));
    t->set_chaining_strategy(strategy);
    env_->add_operator(t);
    return data_stream<Out>(env_, std::move(t));
  }

protected:
  /// The key-group partition in front of a keyed stream.
  template <class K>
  keyed_stream<T, K> key_by_selector(std::shared_ptr<const typed_key_selector<T, K>> key);

  template <class Out>
  data_stream<Out> one_input(std::string name,
                             std::shared_ptr<const graph::operator_factory> factory) {
    return transform<Out>(std::move(name), std::move(factory));
  }

  data_stream_sink<T> sink(std::string name,
                           std::shared_ptr<const graph::operator_factory> factory) {
    auto t = env_->new_transformation(graph::transformation_kind::sink, std::move(name),
                                      env_->parallelism());
    t->add_input(this->transformation());
    t->set_factory(std::move(factory));
    env_->add_operator(t);
    return data_stream_sink<T>(std::move(t));
  }

  stream_execution_environment* env_;
};

} // namespace flint::api

#include "api/keyed_stream.hpp"
