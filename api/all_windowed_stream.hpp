#pragma once
/// Windows over a whole stream (Flink's AllWindowedStream): `window_all(assigner)` is a windowed
/// stream keyed by a constant, evaluated by one subtask (parallelism 1), as Flink runs it. The
/// functions are those of windowed_stream without the key: `reduce`, `aggregate`, `process`
/// (a process_all_window_function), `apply(fn(window, elements, out))`.

#include "api/windowed_stream.hpp"

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

namespace flint::api {

template <class T, class W>
class all_windowed_stream {
public:
  /// The constant key of every element (Flink's NullByteKeySelector).
  using key_type = std::int32_t;

  explicit all_windowed_stream(windowed_stream<T, key_type, W> keyed) : keyed_(std::move(keyed)) {}

  template <class Tr>
  all_windowed_stream& trigger(Tr t) {
    keyed_.trigger(std::move(t));
    return *this;
  }
  template <class E>
  all_windowed_stream& evictor(E e) {
    keyed_.evictor(std::move(e));
    return *this;
  }
  all_windowed_stream& allowed_lateness(std::chrono::milliseconds lateness) {
    keyed_.allowed_lateness(lateness);
    return *this;
  }
  all_windowed_stream& side_output_late_data(const output_tag<T>& tag) {
    keyed_.side_output_late_data(tag);
    return *this;
  }

  template <class F>
  data_stream<T> reduce(F fn) {
    return non_parallel(keyed_.reduce(std::move(fn)));
  }
  /// `process` is a process_all_window_function<T, Out, W>.
  template <class F, class P>
  auto reduce(F fn, P process) {
    return non_parallel(keyed_.reduce(std::move(fn), keyed(std::move(process))));
  }
  template <class A>
  auto aggregate(A agg) {
    return non_parallel(keyed_.aggregate(std::move(agg)));
  }
  template <class A, class P>
  auto aggregate(A agg, P process) {
    return non_parallel(keyed_.aggregate(std::move(agg), keyed(std::move(process))));
  }
  /// `fn` is a copyable class deriving from api::process_all_window_function<T, Out, W>.
  template <class Out = void, class P>
  auto process(P fn) {
    return non_parallel(keyed_.template process<Out>(keyed(std::move(fn))));
  }
  /// Flink's AllWindowFunction: `fn(const W& window, const std::vector<T>& elements,
  /// collector<Out>& out)`.
  template <class Out, class F>
  data_stream<Out> apply(F fn) {
    return non_parallel(keyed_.template apply<Out>(
      [fn](const key_type&, const W& window, const std::vector<T>& elements,
           collector<Out>& out) mutable { fn(window, elements, out); }));
  }

private:
  template <class P>
  static auto keyed(P fn) {
    static_assert(std::is_base_of_v<streaming::process_all_window_function<
                                      typename P::input_type, typename P::output_type, W>,
                                    P>,
                  "window_all's process takes a class deriving from "
                  "api::process_all_window_function<In, Out, W>");
    return streaming::all_to_keyed_process<key_type, W, P>(std::move(fn));
  }
  template <class Out>
  static data_stream<Out> non_parallel(data_stream<Out> out) {
    out.set_parallelism(1);
    return out;
  }

  windowed_stream<T, key_type, W> keyed_;
};

template <class T>
template <class A>
all_windowed_stream<T, typename A::window_type> data_stream<T>::window_all(A assigner) {
  using key_type = typename all_windowed_stream<T, typename A::window_type>::key_type;
  auto keyed = key_by([](const T&) { return key_type{0}; });
  return all_windowed_stream<T, typename A::window_type>(keyed.window(std::move(assigner)));
}

} // namespace flint::api
