#pragma once
/// Window joins (Flink's JoinedStreams and CoGroupedStreams): `a.join(b).where(ka).equal_to(kb)
/// .window(assigner).apply(f)` pairs the elements of both streams that share a key and a window;
/// `co_group` hands a window's two lists to the function, even when one is empty. As in Flink,
/// both inputs become one tagged stream (each element in its slot of a pair), keyed and windowed
/// by the usual window operator, and the function sees them split again when a window fires.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace flint::api {

/// An element of either input (Flink's TaggedUnion): exactly one slot is set.
template <class T1, class T2>
using tagged_union = std::pair<std::optional<T1>, std::optional<T2>>;

namespace detail {

/// The two inputs tagged, unioned and keyed (what join and co_group window).
template <class T1, class T2, class K, class F1, class F2>
auto tagged_and_keyed(data_stream<T1> first, data_stream<T2> second, F1 key1, F2 key2) {
  using tagged = tagged_union<T1, T2>;
  auto one = first.map([](const T1& v) { return tagged{v, std::nullopt}; });
  auto two = second.map([](const T2& v) { return tagged{std::nullopt, v}; });
  return one.union_with(two).key_by([key1, key2](const tagged& t) -> K {
    return t.first ? key1(*t.first) : key2(*t.second);
  });
}

} // namespace detail

/// `co_group(...).where(...).equal_to(...).window(...)`: waits for `apply`.
template <class T1, class T2, class K, class W, class Windowed>
class co_grouped_window {
public:
  explicit co_grouped_window(Windowed windowed) : windowed_(std::move(windowed)) {}
  template <class Tr>
  co_grouped_window& trigger(Tr t) {
    windowed_.trigger(std::move(t));
    return *this;
  }
  co_grouped_window& allowed_lateness(std::chrono::milliseconds lateness) {
    windowed_.allowed_lateness(lateness);
    return *this;
  }
  /// `f(const std::vector<T1>&, const std::vector<T2>&, collector<Out>&)` once per key and
  /// window (Flink's CoGroupFunction).
  template <class Out, class F>
  data_stream<Out> apply(F f) {
    return windowed_.template apply<Out>(
      [f](const K&, const W&, const std::vector<tagged_union<T1, T2>>& elements,
          collector<Out>& out) {
        std::vector<T1> first;
        std::vector<T2> second;
        for (const auto& e : elements) {
          if (e.first)
            first.push_back(*e.first);
          else
            second.push_back(*e.second);
        }
        f(first, second, out);
      });
  }

protected:
  Windowed windowed_;
};

/// `join(...).where(...).equal_to(...).window(...)`: every pair of one window and key.
template <class T1, class T2, class K, class W, class Windowed>
class joined_window : co_grouped_window<T1, T2, K, W, Windowed> {
  using base = co_grouped_window<T1, T2, K, W, Windowed>;

public:
  using base::base;
  using base::allowed_lateness;
  using base::trigger;
  /// `f(const T1&, const T2&)` returning the joined record (Flink's JoinFunction), or
  /// `f(const T1&, const T2&, collector<Out>&)` (FlatJoinFunction, give Out).
  template <class Out = void, class F>
  auto apply(F f) {
    if constexpr (std::is_invocable_v<F&, const T1&, const T2&>) {
      using out = std::decay_t<std::invoke_result_t<F&, const T1&, const T2&>>;
      return base::template apply<out>(
        [f](const std::vector<T1>& a, const std::vector<T2>& b, collector<out>& c) {
          for (const auto& x : a)
            for (const auto& y : b)
              c.collect(f(x, y));
        });
    } else {
      static_assert(!std::is_void_v<Out>, "a flat join function needs its output type: apply<Out>");
      return base::template apply<Out>(
        [f](const std::vector<T1>& a, const std::vector<T2>& b, collector<Out>& c) {
          for (const auto& x : a)
            for (const auto& y : b)
              f(x, y, c);
        });
    }
  }
};

/// After `equal_to`: the window of the join or co-group.
template <class T1, class T2, class K, bool Join>
class two_stream_keys {
public:
  two_stream_keys(data_stream<T1> first, data_stream<T2> second, std::function<K(const T1&)> key1,
                  std::function<K(const T2&)> key2)
    : first_(std::move(first)),
      second_(std::move(second)),
      key1_(std::move(key1)),
      key2_(std::move(key2)) {}

  template <class A>
  auto window(A assigner) const {
    using W = typename A::window_type;
    auto windowed = detail::tagged_and_keyed<T1, T2, K>(first_, second_, key1_, key2_)
                      .window(std::move(assigner));
    if constexpr (Join)
      return joined_window<T1, T2, K, W, decltype(windowed)>(std::move(windowed));
    else
      return co_grouped_window<T1, T2, K, W, decltype(windowed)>(std::move(windowed));
  }

private:
  data_stream<T1> first_;
  data_stream<T2> second_;
  std::function<K(const T1&)> key1_;
  std::function<K(const T2&)> key2_;
};

/// After `where`: the second input's key.
template <class T1, class T2, class K, bool Join>
class two_stream_where {
public:
  two_stream_where(data_stream<T1> first, data_stream<T2> second, std::function<K(const T1&)> key1)
    : first_(std::move(first)),
      second_(std::move(second)),
      key1_(std::move(key1)) {}
  template <class F2>
  two_stream_keys<T1, T2, K, Join> equal_to(F2 key2) const {
    static_assert(std::is_same_v<K, std::decay_t<std::invoke_result_t<F2&, const T2&>>>,
                  "where and equal_to must select keys of the same type");
    return {first_, second_, key1_, std::function<K(const T2&)>(std::move(key2))};
  }

private:
  data_stream<T1> first_;
  data_stream<T2> second_;
  std::function<K(const T1&)> key1_;
};

/// `a.join(b)` / `a.co_group(b)`: the first input's key (Flink's JoinedStreams/CoGroupedStreams).
template <class T1, class T2, bool Join>
class two_stream_builder {
public:
  two_stream_builder(data_stream<T1> first, data_stream<T2> second)
    : first_(std::move(first)),
      second_(std::move(second)) {}
  template <class F1>
  auto where(F1 key1) const {
    using K = std::decay_t<std::invoke_result_t<F1&, const T1&>>;
    return two_stream_where<T1, T2, K, Join>(first_, second_,
                                             std::function<K(const T1&)>(std::move(key1)));
  }

private:
  data_stream<T1> first_;
  data_stream<T2> second_;
};

template <class T1, class T2>
using joined_streams = two_stream_builder<T1, T2, true>;
template <class T1, class T2>
using co_grouped_streams = two_stream_builder<T1, T2, false>;

} // namespace flint::api
