#pragma once
/// Two streams connected into one two-input operator (Flink's ConnectedStreams): `co_map`,
/// `co_flat_map` and `process` with a CoProcessFunction; both keyed (`keyed_stream::connect`, or
/// `key_by` on the pair): `process` with a KeyedCoProcessFunction, whose state and timers both
/// inputs share per key.

#include "api/functions.hpp"
#include "runtime/streaming/operators/two_input/co_process_operator.hpp"

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace flint::api {

template <class T>
class data_stream;

template <class In1, class In2, class Out>
using co_process_function = streaming::co_process_function<In1, In2, Out>;
using co_process_context = streaming::co_process_context;
template <class K, class In1, class In2, class Out>
using keyed_co_process_function = streaming::keyed_co_process_function<K, In1, In2, Out>;

/// `connect(...).process(F)`: each subtask runs its own copy of `F`.
template <class In1, class In2, class Out, class F>
class co_process_factory : public named_operator_factory {
public:
  explicit co_process_factory(F fn) : named_operator_factory("co_process"), fn(std::move(fn)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::co_process_operator<In1, In2, Out>>(
      std::make_unique<F>(fn), ctx, streaming::make_output<Out>(ctx));
  }
  F fn;
};

/// `connect(...).key_by(...).process(F)` or `keyed.connect(keyed).process(F)`.
template <class K, class In1, class In2, class Out, class F>
class keyed_co_process_factory : public named_operator_factory {
public:
  keyed_co_process_factory(F fn, std::function<K(const In1&)> key1,
                           std::function<K(const In2&)> key2)
    : named_operator_factory("keyed_co_process"),
      fn(std::move(fn)),
      key1(std::move(key1)),
      key2(std::move(key2)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return std::make_unique<streaming::keyed_co_process_operator<K, In1, In2, Out>>(
      std::make_unique<F>(fn), key1, key2, ctx, streaming::make_output<Out>(ctx));
  }
  F fn;
  std::function<K(const In1&)> key1;
  std::function<K(const In2&)> key2;
};

namespace detail {

/// A two-input operator on `first` and `second` (Flink's TwoInputTransformation): it heads its
/// chain, as two-input operators cannot chain to either input.
template <class Out>
data_stream<Out> two_input_transform(stream_execution_environment* env,
                                     std::shared_ptr<graph::transformation> first,
                                     std::shared_ptr<graph::transformation> second,
                                     std::string name,
                                     std::shared_ptr<const graph::operator_factory> factory) {
  auto t = env->new_transformation(graph::transformation_kind::two_input, std::move(name),
                                   env->parallelism());
  t->add_input(std::move(first));
  t->add_input(std::move(second));
  t->set_factory(std::move(factory));
  t->set_chaining_strategy(graph::chaining_strategy::head);
  env->add_operator(t);
  return data_stream<Out>(env, std::move(t));
}

/// map1/map2 (CoMapFunction) as a CoProcessFunction.
template <class In1, class In2, class Out, class F1, class F2>
struct co_map_function final : co_process_function<In1, In2, Out> {
  co_map_function(F1 f1, F2 f2) : f1(std::move(f1)), f2(std::move(f2)) {}
  void process_element1(const In1& v, co_process_context&, streaming::output<Out>& out) override {
    out.collect(f1(v));
  }
  void process_element2(const In2& v, co_process_context&, streaming::output<Out>& out) override {
    out.collect(f2(v));
  }
  F1 f1;
  F2 f2;
};

/// flatMap1/flatMap2 (CoFlatMapFunction) as a CoProcessFunction.
template <class In1, class In2, class Out, class F1, class F2>
struct co_flat_map_function final : co_process_function<In1, In2, Out> {
  co_flat_map_function(F1 f1, F2 f2) : f1(std::move(f1)), f2(std::move(f2)) {}
  void process_element1(const In1& v, co_process_context&, streaming::output<Out>& out) override {
    f1(v, out);
  }
  void process_element2(const In2& v, co_process_context&, streaming::output<Out>& out) override {
    f2(v, out);
  }
  F1 f1;
  F2 f2;
};

} // namespace detail

/// Both inputs keyed by K: a KeyedCoProcessFunction over them.
template <class In1, class In2, class K>
class keyed_connected_streams {
public:
  keyed_connected_streams(stream_execution_environment* env,
                          std::shared_ptr<graph::transformation> first,
                          std::shared_ptr<graph::transformation> second,
                          std::function<K(const In1&)> key1, std::function<K(const In2&)> key2)
    : env_(env),
      first_(std::move(first)),
      second_(std::move(second)),
      key1_(std::move(key1)),
      key2_(std::move(key2)) {}

  template <class Out, class F>
  data_stream<Out> process(F fn) {
    static_assert(std::is_base_of_v<keyed_co_process_function<K, In1, In2, Out>, F>,
                  "process takes a class deriving from api::keyed_co_process_function<K, In1, In2, "
                  "Out>");
    static_assert(std::is_copy_constructible_v<F>, "each subtask gets its own copy of the function");
    return two_input<Out>("KeyedCoProcess",
                          std::make_shared<keyed_co_process_factory<K, In1, In2, Out, F>>(
                            std::move(fn), key1_, key2_));
  }

private:
  template <class Out>
  data_stream<Out> two_input(std::string name,
                             std::shared_ptr<const graph::operator_factory> factory) {
    return detail::two_input_transform<Out>(env_, first_, second_, std::move(name),
                                            std::move(factory));
  }

  stream_execution_environment* env_;
  std::shared_ptr<graph::transformation> first_;
  std::shared_ptr<graph::transformation> second_;
  std::function<K(const In1&)> key1_;
  std::function<K(const In2&)> key2_;
};

template <class In1, class In2>
class connected_streams {
public:
  connected_streams(stream_execution_environment* env, std::shared_ptr<graph::transformation> first,
                    std::shared_ptr<graph::transformation> second)
    : env_(env),
      first_(std::move(first)),
      second_(std::move(second)) {}

  /// `f1` for the first input's records, `f2` for the second's; one output each (CoMap).
  template <class F1, class F2>
  auto map(F1 f1, F2 f2) {
    using out = std::decay_t<std::invoke_result_t<F1&, const In1&>>;
    static_assert(std::is_same_v<out, std::decay_t<std::invoke_result_t<F2&, const In2&>>>,
                  "both map functions of a CoMap return the same type");
    using fn = detail::co_map_function<In1, In2, out, F1, F2>;
    return two_input<out>("Co-Map", std::make_shared<co_process_factory<In1, In2, out, fn>>(
                                      fn(std::move(f1), std::move(f2))));
  }
  /// `f1(record, collector)` and `f2(record, collector)` (CoFlatMap).
  template <class Out, class F1, class F2>
  data_stream<Out> flat_map(F1 f1, F2 f2) {
    using fn = detail::co_flat_map_function<In1, In2, Out, F1, F2>;
    return two_input<Out>("Co-Flat Map", std::make_shared<co_process_factory<In1, In2, Out, fn>>(
                                           fn(std::move(f1), std::move(f2))));
  }
  /// A CoProcessFunction of the user's.
  template <class Out, class F>
  data_stream<Out> process(F fn) {
    static_assert(std::is_base_of_v<co_process_function<In1, In2, Out>, F>,
                  "process takes a class deriving from api::co_process_function<In1, In2, Out>");
    return two_input<Out>("Co-Process",
                          std::make_shared<co_process_factory<In1, In2, Out, F>>(std::move(fn)));
  }
  /// Both inputs keyed, by `k1` and `k2` (which must give the same key type).
  template <class F1, class F2>
  auto key_by(F1 k1, F2 k2);

private:
  template <class Out>
  data_stream<Out> two_input(std::string name,
                             std::shared_ptr<const graph::operator_factory> factory) {
    return detail::two_input_transform<Out>(env_, first_, second_, std::move(name),
                                            std::move(factory));
  }

  stream_execution_environment* env_;
  std::shared_ptr<graph::transformation> first_;
  std::shared_ptr<graph::transformation> second_;
};

} // namespace flint::api
