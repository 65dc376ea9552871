#pragma once
/// A stream partitioned by key (Flink's KeyedStream): a key-group partition in front of the
/// stream, and the keyed aggregations.

#include "api/data_stream.hpp"
#include "runtime/streaming/windowing/global_window.hpp"

#include <string>
#include <tuple>
#include <type_traits>

namespace flint::api {

template <class T, class K, class W>
class windowed_stream;

/// Records routed by `K` to key groups; every operation after it sees one key per subtask.
template <class T, class K>
class keyed_stream : public data_stream<T> {
public:
  keyed_stream(stream_execution_environment* env, std::shared_ptr<graph::transformation> partition,
               std::shared_ptr<const typed_key_selector<T, K>> key)
    : data_stream<T>(env, std::move(partition)),
      key_(std::move(key)) {}

  const std::shared_ptr<const typed_key_selector<T, K>>& key() const { return key_; }

  /// Folds each key's records with `fn(accumulated, next)`, emitting every new value.
  template <class F>
  data_stream<T> reduce(F fn) {
    std::function<T(const T&, const T&)> erased(fn);
    return keyed_operator("Keyed Reduce", "reduce", std::move(erased), nullptr, false,
                          streaming::replacing_fold<F>{std::move(fn)});
  }

  /// Running sum of tuple field `Field` per key; other fields keep the first record's values
  /// (named "aggregation", as the seed's Scala API names it).
  template <std::size_t Field>
  data_stream<T> sum() {
    return keyed_operator(
      "aggregation", "sum",
      [](const T& acc, const T& next) {
        T out = acc;
        std::get<Field>(out) += std::get<Field>(next);
        return out;
      },
      [](T& acc, const T& next) { std::get<Field>(acc) += std::get<Field>(next); },
      key_->field_index != static_cast<int>(Field), streaming::tuple_field_sum<Field>{});
  }

  /// Runs the user's KeyedProcessFunction<K, T, Out> (a copyable class deriving from
  /// api::keyed_process_function) on each record with its key's value, list and map states.
  template <class Out, class F>
  data_stream<Out> process(F fn) {
    static_assert(std::is_base_of_v<keyed_process_function<K, T, Out>, F>,
                  "process takes a class deriving from api::keyed_process_function<K, In, Out>");
    static_assert(std::is_copy_constructible_v<F>,
                  "each subtask gets its own copy of the function");
    auto factory = std::make_shared<keyed_process_factory<T, K, Out, F>>(std::move(fn), key_->fn);
    return this->template transform<Out>("KeyedProcess", std::move(factory));
  }

  /// Groups each key's records into the windows `assigner` gives (Flink's KeyedStream#window):
  /// `window(api::tumbling_event_time_windows::of(1min))`; see api/windowed_stream.hpp.
  template <class A>
  windowed_stream<T, K, typename A::window_type> window(A assigner);
  /// Windows of `size` records per key (Flink's countWindow): global windows fired and purged
  /// every `size` records.
  windowed_stream<T, K, streaming::global_window> count_window(std::int64_t size);
  /// Sliding count windows: the last `size` records per key, fired every `slide` records.
  windowed_stream<T, K, streaming::global_window> count_window(std::int64_t size,
                                                               std::int64_t slide);

  /// Both keyed streams into one keyed two-input operator (Flink's KeyedStream.connect).
  template <class U>
  keyed_connected_streams<T, U, K> connect(const keyed_stream<U, K>& other) const {
    return keyed_connected_streams<T, U, K>(&this->environment(), this->transformation(),
                                            other.transformation(), key_->fn, other.key()->fn);
  }

  /// Joins with `other` on the key within a time interval (Flink's intervalJoin).
  template <class U>
  interval_join_builder<T, U, K> interval_join(const keyed_stream<U, K>& other) const {
    return interval_join_builder<T, U, K>(&this->environment(), this->transformation(),
                                       other.transformation(), key_->fn, other.key()->fn);
  }

private:
  /// `keeps_key`: `fold` never changes the key field, so state may hold values keyed in place.
  /// `f` does what `fn` (or `fold` in place) does, with its type known to the compiler.
  template <class Fold>
  data_stream<T> keyed_operator(std::string name, std::string kind,
                                std::function<T(const T&, const T&)> fn,
                                std::function<void(T&, const T&)> fold, bool keeps_key, Fold f) {
    auto factory = make_keyed_reduce_factory<T, K>(
      std::move(kind), std::move(fn), key_->fn, std::move(fold), keeps_key ? key_->field : nullptr,
      key_->field ? key_->field_index : -1, std::move(f));
    // Flink's StreamGroupedReduce keeps the HEAD strategy of AbstractStreamOperator (§3.1).
    return this->template transform<T>(std::move(name), std::move(factory),
                                       graph::chaining_strategy::head);
  }

  std::shared_ptr<const typed_key_selector<T, K>> key_;
};

template <class T>
template <class K>
keyed_stream<T, K> data_stream<T>::key_by_selector(
  std::shared_ptr<const typed_key_selector<T, K>> key) {
  graph::stream_partitioner partitioner;
  partitioner.kind = graph::partitioner_kind::key_group;
  partitioner.max_parallelism = graph::default_lower_bound_max_parallelism;
  partitioner.key = key;
  auto t = env_->new_transformation(graph::transformation_kind::partition, "Partition",
                                    this->transformation()->parallelism());
  t->add_input(this->transformation());
  t->set_partitioner(std::move(partitioner));
  return keyed_stream<T, K>(env_, std::move(t), std::move(key));
}

template <class T>
template <std::size_t Field>
keyed_stream<T, std::decay_t<std::tuple_element_t<Field, T>>> data_stream<T>::key_by() {
  using key_type = std::decay_t<std::tuple_element_t<Field, T>>;
  return key_by_selector<key_type>(std::make_shared<field_key_selector<T, key_type, Field>>());
}

template <class T>
template <class F>
keyed_stream<T, std::decay_t<std::invoke_result_t<F&, const T&>>> data_stream<T>::key_by(
  F selector) {
  using key_type = std::decay_t<std::invoke_result_t<F&, const T&>>;
  return key_by_selector<key_type>(
    std::make_shared<typed_key_selector<T, key_type>>(std::move(selector), "key selector"));
}

template <class In1, class In2>
template <class F1, class F2>
auto connected_streams<In1, In2>::key_by(F1 k1, F2 k2) {
  auto first = data_stream<In1>(env_, first_).key_by(std::move(k1));
  auto second = data_stream<In2>(env_, second_).key_by(std::move(k2));
  return first.connect(second);
}

} // namespace flint::api

#include "api/windowed_stream.hpp"
#include "api/all_windowed_stream.hpp"
#include "api/joined_streams.hpp"
