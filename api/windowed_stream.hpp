#pragma once
/// Windows on a keyed stream (Flink's WindowedStream): `key_by(...).window(assigner)`, then
/// optionally `.trigger(...)`, `.evictor(...)`, `.allowed_lateness(d)`,
/// `.side_output_late_data(tag)`, and a window function: `reduce`, `aggregate`, `process`,
/// `apply`, or reduce/aggregate followed by a process function. Flink's assigners, triggers and
/// evictors are re-exported here in snake_case; the built-in triggers and evictors are spelt
/// without their element type, which the windowed stream fills in:
///
///     clicks.key_by([](const click& c) { return c.user; })
///       .window(api::tumbling_event_time_windows::of(1min))
///       .trigger(api::purging_trigger::of(api::count_trigger::of(100)))
///       .allowed_lateness(10s)
///       .side_output_late_data(late)
///       .aggregate(count_clicks{});
///
/// A user trigger or evictor is a class deriving from `api::trigger<T, W>` / `api::evictor<T, W>`
/// passed as a `std::unique_ptr` (`.trigger(std::make_unique<my_trigger>())`); the built-ins in
/// their explicit form are `streaming::count_trigger<T, W>::of(n)` and so on.

#include "api/keyed_stream.hpp"
#include "runtime/streaming/windowing/continuous_event_time_trigger.hpp"
#include "runtime/streaming/windowing/count_evictor.hpp"
#include "runtime/streaming/windowing/count_trigger.hpp"
#include "runtime/streaming/windowing/event_time_trigger.hpp"
#include "runtime/streaming/windowing/global_windows.hpp"
#include "runtime/streaming/windowing/local_window_aggregate_operator.hpp"
#include "runtime/streaming/windowing/processing_time_trigger.hpp"
#include "runtime/streaming/windowing/purging_trigger.hpp"
#include "runtime/streaming/windowing/session_windows.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/global_window_aggregate.hpp"
#include "runtime/streaming/windowing/slicing_window_operator.hpp"
#include "runtime/streaming/windowing/time_evictor.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace flint::api {

// -- Flink's windowing vocabulary -------------------------------------------------------------

using time_window = streaming::time_window;
using global_window = streaming::global_window;
using tumbling_event_time_windows = streaming::tumbling_event_time_windows;
using tumbling_processing_time_windows = streaming::tumbling_processing_time_windows;
using sliding_event_time_windows = streaming::sliding_event_time_windows;
using sliding_processing_time_windows = streaming::sliding_processing_time_windows;
using event_time_session_windows = streaming::event_time_session_windows;
using processing_time_session_windows = streaming::processing_time_session_windows;
using global_windows = streaming::global_windows;

template <class T, class W = time_window>
using trigger = streaming::trigger<T, W>;
using trigger_result = streaming::trigger_result;
using trigger_context = streaming::trigger_context;
using on_merge_context = streaming::on_merge_context;
template <class T, class W = time_window>
using evictor = streaming::evictor<T, W>;
using evictor_context = streaming::evictor_context;
template <class T>
using timestamped_value = streaming::timestamped_value<T>;

template <class In, class Acc, class Out>
using aggregate_function = streaming::aggregate_function<In, Acc, Out>;
template <class In, class Out, class K, class W = time_window>
using process_window_function = streaming::process_window_function<In, Out, K, W>;
template <class In, class Out, class W = time_window>
using process_all_window_function = streaming::process_all_window_function<In, Out, W>;
template <class W = time_window>
using window_context = streaming::window_context<W>;
using window_state_store = streaming::window_state_store;

/// A built-in trigger or evictor whose element and window types the windowed stream fills in:
/// `make(std::type_identity<T>{}, std::type_identity<W>{})` builds it.
template <class Make>
struct typed_later {
  Make make;
  template <class T, class W>
  auto build() const {
    return make(std::type_identity<T>{}, std::type_identity<W>{});
  }
};
template <class Make>
typed_later(Make) -> typed_later<Make>;

namespace detail {
template <class X>
struct is_typed_later : std::false_type {};
template <class M>
struct is_typed_later<typed_later<M>> : std::true_type {};
} // namespace detail

/// Flink's EventTimeTrigger: `.trigger(api::event_time_trigger::create())`.
struct event_time_trigger {
  static auto create() {
    return typed_later{[](auto t, auto w) {
      return streaming::event_time_trigger<typename decltype(t)::type,
                                           typename decltype(w)::type>::create();
    }};
  }
};
/// Flink's ProcessingTimeTrigger.
struct processing_time_trigger {
  static auto create() {
    return typed_later{[](auto t, auto w) {
      return streaming::processing_time_trigger<typename decltype(t)::type,
                                                typename decltype(w)::type>::create();
    }};
  }
};
/// Flink's CountTrigger: fires every `max_count` elements of a window.
struct count_trigger {
  static auto of(std::int64_t max_count) {
    return typed_later{[max_count](auto t, auto w) {
      return streaming::count_trigger<typename decltype(t)::type,
                                      typename decltype(w)::type>::of(max_count);
    }};
  }
};
/// Flink's ContinuousEventTimeTrigger: fires every `interval` of event time and at the end.
struct continuous_event_time_trigger {
  static auto of(std::chrono::milliseconds interval) {
    return typed_later{[interval](auto t, auto w) {
      return streaming::continuous_event_time_trigger<typename decltype(t)::type,
                                                      typename decltype(w)::type>::of(interval);
    }};
  }
};
/// Flink's PurgingTrigger around another built-in: `purging_trigger::of(count_trigger::of(5))`.
struct purging_trigger {
  template <class Nested>
  static auto of(typed_later<Nested> nested) {
    return typed_later{[nested](auto t, auto w) {
      using T = typename decltype(t)::type;
      using W = typename decltype(w)::type;
      std::unique_ptr<streaming::trigger<T, W>> inner = nested.template build<T, W>();
      return streaming::purging_trigger<T, W>::of(std::move(inner));
    }};
  }
};
/// Flink's CountEvictor: keeps the last `max_count` elements (before the function, or after).
struct count_evictor {
  static auto of(std::int64_t max_count, bool do_evict_after = false) {
    return typed_later{[max_count, do_evict_after](auto t, auto w) {
      return streaming::count_evictor<typename decltype(t)::type,
                                      typename decltype(w)::type>::of(max_count, do_evict_after);
    }};
  }
};
/// Flink's TimeEvictor: keeps the elements of the last `window_size` of event time.
struct time_evictor {
  static auto of(std::chrono::milliseconds window_size, bool do_evict_after = false) {
    return typed_later{[window_size, do_evict_after](auto t, auto w) {
      return streaming::time_evictor<typename decltype(t)::type,
                                     typename decltype(w)::type>::of(window_size, do_evict_after);
    }};
  }
};

/// Builds the operator of each subtask (the windowed stream's function, typed by its contents).
class window_operator_factory final : public named_operator_factory {
public:
  using make_fn =
    std::function<std::unique_ptr<streaming::stream_operator>(streaming::operator_context&)>;
  explicit window_operator_factory(make_fn make)
    : named_operator_factory("window"),
      make_(std::move(make)) {}
  std::unique_ptr<streaming::stream_operator> create_operator(
    streaming::operator_context& ctx) const override {
    return make_(ctx);
  }

private:
  make_fn make_;
};

template <class T, class K, class W>
class windowed_stream {
public:
  windowed_stream(keyed_stream<T, K> input, std::shared_ptr<const streaming::window_assigner<W>> assigner)
    : input_(std::move(input)) {
    settings_.assigner = std::move(assigner);
  }

  /// The trigger that fires the windows (default: the assigner's): a built-in from this
  /// namespace (`api::count_trigger::of(5)`) or a `std::unique_ptr` to a user trigger<T, W>.
  template <class Tr>
  windowed_stream& trigger(Tr t) {
    if constexpr (detail::is_typed_later<Tr>::value) {
      settings_.window_trigger = std::shared_ptr<streaming::trigger<T, W>>(t.template build<T, W>());
    } else {
      static_assert(std::is_convertible_v<Tr, std::unique_ptr<streaming::trigger<T, W>>>,
                    "trigger takes api::count_trigger::of(n) and the like, or a std::unique_ptr "
                    "to a class deriving from api::trigger<T, W> of the stream's types");
      settings_.window_trigger = std::shared_ptr<streaming::trigger<T, W>>(std::move(t));
    }
    if (settings_.assigner->is_merging() && !settings_.window_trigger->can_merge())
      throw std::invalid_argument("A merging window assigner cannot be used with a trigger that "
                                  "does not support merging.");
    return *this;
  }

  /// Removes elements before or after the function runs (`api::count_evictor::of(n)`, or a
  /// `std::unique_ptr` to a user evictor<T, W>); the windows then keep every element.
  template <class E>
  windowed_stream& evictor(E e) {
    if constexpr (detail::is_typed_later<E>::value) {
      settings_.window_evictor = std::shared_ptr<streaming::evictor<T, W>>(e.template build<T, W>());
    } else {
      static_assert(std::is_convertible_v<E, std::unique_ptr<streaming::evictor<T, W>>>,
                    "evictor takes api::count_evictor::of(n) and the like, or a std::unique_ptr "
                    "to a class deriving from api::evictor<T, W> of the stream's types");
      settings_.window_evictor = std::shared_ptr<streaming::evictor<T, W>>(std::move(e));
    }
    return *this;
  }

  /// How long after its end (event time) a window still takes elements and fires again for
  /// each; 0 by default. Negative: std::invalid_argument.
  windowed_stream& allowed_lateness(std::chrono::milliseconds lateness) {
    if (lateness.count() < 0)
      throw std::invalid_argument("The allowed lateness cannot be negative.");
    settings_.allowed_lateness = lateness.count();
    return *this;
  }

  /// Elements too late for every window go to side output `tag` (read it with
  /// `get_side_output(tag)` on the window's result) instead of being dropped.
  windowed_stream& side_output_late_data(const output_tag<T>& tag) {
    settings_.late_data_tag = tag;
    return *this;
  }

  /// Folds each window's elements with `fn(a, b)` as they arrive; emits the result.
  template <class F>
  data_stream<T> reduce(F fn) {
    static_assert(std::is_invocable_r_v<T, F&, const T&, const T&>,
                  "reduce takes a function (const T&, const T&) -> T");
    using pass = streaming::pass_through_window_function<T, K, W>;
    if (settings_.window_evictor)
      return build<T>("ReduceFunction", streaming::list_contents<T>(), [fn] {
        return std::make_unique<streaming::folding_window_function<T, T, T, K, W>>(
          fold_with(fn), std::make_unique<pass>());
      });
    return build<T>("ReduceFunction", streaming::reducing_contents<T, F>(fn),
                    [] { return std::make_unique<pass>(); });
  }

  /// Folds with `fn` as elements arrive, then hands the one value to `process` (a
  /// process_window_function<T, Out, K, W>) with its window.
  template <class F, class P>
  data_stream<typename P::output_type> reduce(F fn, P process) {
    using Out = typename P::output_type;
    check_process<T, P>();
    using user = streaming::user_process_window_function<T, Out, K, W, P>;
    if (settings_.window_evictor)
      return build<Out>("ReduceFunction, ProcessWindowFunction", streaming::list_contents<T>(),
                        [fn, process] {
                          return std::make_unique<streaming::folding_window_function<T, T, Out, K, W>>(
                            fold_with(fn), std::make_unique<user>(process));
                        });
    return build<Out>("ReduceFunction, ProcessWindowFunction",
                      streaming::reducing_contents<T, F>(fn),
                      [process] { return std::make_unique<user>(process); });
  }

  /// Adds each element to the window's accumulator (Flink's AggregateFunction: a class with
  /// `Acc create_accumulator()`, `Acc add(const T&, Acc)`, `Out get_result(const Acc&)` and
  /// `Acc merge(Acc, Acc)`, e.g. deriving from api::aggregate_function<T, Acc, Out>); emits
  /// get_result.
  template <class A>
  auto aggregate(A agg) {
    using contents = streaming::aggregating_contents<T, A>;
    using R = typename contents::result_type;
    using pass = streaming::pass_through_window_function<R, K, W>;
    if (settings_.window_evictor)
      return build<R>("AggregateFunction", streaming::list_contents<T>(), [agg] {
        return std::make_unique<streaming::folding_window_function<T, R, R, K, W>>(
          aggregate_with(agg), std::make_unique<pass>());
      });
    return build<R>("AggregateFunction", contents(agg), [] { return std::make_unique<pass>(); });
  }

  /// Aggregates as elements arrive, then hands the result to `process`.
  template <class A, class P>
  data_stream<typename P::output_type> aggregate(A agg, P process) {
    using contents = streaming::aggregating_contents<T, A>;
    using R = typename contents::result_type;
    using Out = typename P::output_type;
    check_process<R, P>();
    using user = streaming::user_process_window_function<R, Out, K, W, P>;
    if (settings_.window_evictor)
      return build<Out>("AggregateFunction, ProcessWindowFunction", streaming::list_contents<T>(),
                        [agg, process] {
                          return std::make_unique<streaming::folding_window_function<T, R, Out, K, W>>(
                            aggregate_with(agg), std::make_unique<user>(process));
                        });
    return build<Out>("AggregateFunction, ProcessWindowFunction", contents(agg),
                      [process] { return std::make_unique<user>(process); });
  }

  /// Runs `fn` (a copyable class deriving from api::process_window_function<T, Out, K, W>) over
  /// all elements of each window that fires. `Out` is the function's, or as given.
  template <class Out = void, class P>
  auto process(P fn) {
    using out = std::conditional_t<std::is_void_v<Out>, typename P::output_type, Out>;
    check_process<T, P>();
    using user = streaming::user_process_window_function<std::vector<T>, out, K, W, P>;
    return build<out>("ProcessWindowFunction", streaming::list_contents<T>(),
                      [fn] { return std::make_unique<user>(fn); });
  }

  /// Flink's WindowFunction: `fn(const K& key, const W& window, const std::vector<T>& elements,
  /// collector<Out>& out)` over all elements of each window that fires.
  template <class Out, class F>
  data_stream<Out> apply(F fn) {
    using applied = streaming::apply_window_function<T, Out, K, W, F>;
    return build<Out>("WindowFunction", streaming::list_contents<T>(),
                      [fn] { return std::make_unique<applied>(fn); });
  }

  const streaming::window_settings<T, W>& settings() const { return settings_; }

private:
  template <class In, class P>
  static void check_process() {
    static_assert(
      std::is_base_of_v<streaming::process_window_function<In, typename P::output_type, K, W>, P>,
      "process takes a class deriving from api::process_window_function<In, Out, K, W> of the "
      "window's input, key and window types");
    static_assert(std::is_copy_constructible_v<P>,
                  "each subtask gets its own copy of the function");
  }

  template <class F>
  static std::function<T(const std::vector<T>&)> fold_with(F fn) {
    return [fn](const std::vector<T>& values) mutable {
      T acc = values.front();
      for (std::size_t i = 1; i < values.size(); ++i)
        acc = fn(acc, values[i]);
      return acc;
    };
  }

  template <class A>
  static auto aggregate_with(A agg) {
    using R = typename streaming::aggregating_contents<T, A>::result_type;
    return std::function<R(const std::vector<T>&)>([agg](const std::vector<T>& values) mutable {
      auto acc = agg.create_accumulator();
      for (const auto& v : values)
        acc = agg.add(v, std::move(acc));
      return agg.get_result(acc);
    });
  }

  /// The slicing of a two-phase aggregate (local_window_aggregate_operator.hpp) when one applies:
  /// the strategy is not ONE_PHASE, the assigner is an event-time tumbling or sliding one with
  /// its default trigger, and there is no evictor and no late side output. Lateness is allowed:
  /// the local phase keeps the window operator's view of late records.
  std::optional<streaming::window_slicing> two_phase_slicing() const {
    if constexpr (!std::is_same_v<W, streaming::time_window>) {
      return std::nullopt;
    } else {
      if (input_.environment().window_agg_phase_strategy() == agg_phase_strategy::one_phase
          || settings_.window_evictor || settings_.late_data_tag)
        return std::nullopt;
      if (settings_.window_trigger
          && typeid(*settings_.window_trigger) != typeid(streaming::event_time_trigger<T, W>))
        return std::nullopt;
      return streaming::window_slicing::of(*settings_.assigner);
    }
  }

  /// The operator "Window(<assigner>, <trigger>[, <evictor>], <function>)" after the keyed
  /// input: each subtask gets the contents policy and a function from `make_fn`. A reduce or an
  /// aggregate whose windows slice (two_phase_slicing) gets a LocalWindowAggregate in front of
  /// the exchange instead (build_two_phase).
  template <class Out, class Contents, class MakeFn>
  data_stream<Out> build(const std::string& function, Contents contents, MakeFn make_fn) {
    auto settings = settings_;
    auto trigger_name = settings.window_trigger
      ? settings.window_trigger->to_string()
      : streaming::make_default_trigger<T, W>(*settings.assigner)->to_string();
    auto name = "Window(" + settings.assigner->to_string() + ", " + trigger_name
      + (settings.window_evictor ? ", " + settings.window_evictor->to_string() : std::string())
      + ", " + function + ")";
    if constexpr (!Contents::keeps_elements && std::is_same_v<W, streaming::time_window>) {
      if (auto slicing = two_phase_slicing())
        return build_two_phase<Out>(std::move(name), *slicing, std::move(contents),
                                    std::move(make_fn));
    }
    auto key = input_.key()->fn;
    auto factory = std::make_shared<window_operator_factory>(
      [settings, contents, make_fn, key](streaming::operator_context& ctx)
        -> std::unique_ptr<streaming::stream_operator> {
        return std::make_unique<streaming::window_operator<K, Contents, Out, W>>(
          settings, contents, make_fn(), key, ctx, streaming::make_output<Out>(ctx));
      });
    return input_.template transform<Out>(std::move(name), std::move(factory));
  }

  /// Flink SQL's two-phase window aggregate: "LocalWindowAggregate" on the input's side of the
  /// key_by exchange (chained to the input's operator: same parallelism, forward), emitting a
  /// (key, accumulator) partial per key and slice, then the exchange keyed by the partial's key
  /// (the same key, so the same key groups and subtasks), then, named as with one phase, Flink
  /// SQL's slicing window operator with the hashmap backend (slicing_window_operator.hpp: one
  /// accumulator per key and slice, the slices merged when a window fires) or the WindowOperator
  /// merging the partials per key and window in the backend with RocksDB
  /// (global_window_aggregate.hpp). The window function is that of one phase; the slicing
  /// operator takes over a per-window savepoint's windows, but its own savepoints restore only
  /// under two phases on hashmap (the WindowOperator refuses their slices).
  template <class Out, class Contents, class MakeFn>
  data_stream<Out> build_two_phase(std::string name, streaming::window_slicing slicing,
                                   Contents contents, MakeFn make_fn) {
    using partial = std::pair<K, typename Contents::state_type>;
    auto& env = input_.environment();
    const auto& partition = input_.transformation();
    // The operator before the exchange, past any partitioning the user wrote before key_by
    // (broadcast, rebalance...), which key_by overrides: the local phase reads that operator's
    // output as it is, once per record.
    auto upstream = partition->inputs().front();
    while (upstream->kind() == graph::transformation_kind::partition)
      upstream = upstream->inputs().front();

    auto key = input_.key()->fn;
    auto local_factory = std::make_shared<window_operator_factory>(
      [slicing, contents, key](streaming::operator_context& ctx)
        -> std::unique_ptr<streaming::stream_operator> {
        return std::make_unique<streaming::local_window_aggregate_operator<K, Contents>>(
          slicing, contents, key, ctx, streaming::make_output<partial>(ctx));
      });
    auto local = env.new_transformation(graph::transformation_kind::one_input,
                                        "LocalWindowAggregate", upstream->parallelism());
    local->add_input(upstream);
    local->set_factory(std::move(local_factory));
    local->set_chaining_strategy(graph::chaining_strategy::always);
    // Every operator keeps the id it has with one phase (savepoints restore either way).
    local->set_id_follows_consumer(true);
    env.add_operator(local);

    const K& (*field)(const partial&) = [](const partial& p) -> const K& { return p.first; };
    auto partial_key = std::make_shared<const typed_key_selector<partial, K>>(
      [](const partial& p) { return p.first; }, input_.key()->description(), field);
    auto partitioner = partition->partitioner();
    partitioner.key = partial_key;
    auto exchange = env.new_transformation(graph::transformation_kind::partition,
                                           partition->name(), local->parallelism());
    exchange->add_input(local);
    exchange->set_partitioner(std::move(partitioner));
    exchange->set_shuffle_mode(partition->shuffle_mode());
    keyed_stream<partial, K> partials(&env, std::move(exchange), partial_key);

    // Behind the exchange, one accumulator per key and slice with the hashmap backend, per key
    // and window in the backend with RocksDB (global_window_aggregate.hpp).
    streaming::window_settings<partial, W> settings;
    settings.assigner = settings_.assigner;
    settings.allowed_lateness = settings_.allowed_lateness;
    auto factory = std::make_shared<window_operator_factory>(
      [settings, contents, make_fn](streaming::operator_context& ctx)
        -> std::unique_ptr<streaming::stream_operator> {
        return streaming::make_global_window_aggregate<K, Contents, Out>(settings, contents,
                                                                         make_fn, ctx);
      });
    return partials.template transform<Out>(std::move(name), std::move(factory));
  }

  keyed_stream<T, K> input_;
  streaming::window_settings<T, W> settings_;
};

template <class T, class K>
template <class A>
windowed_stream<T, K, typename A::window_type> keyed_stream<T, K>::window(A assigner) {
  using W = typename A::window_type;
  static_assert(std::is_base_of_v<streaming::window_assigner<W>, A>,
                "window takes an assigner such as api::tumbling_event_time_windows::of(1min)");
  return windowed_stream<T, K, W>(*this, std::make_shared<A>(std::move(assigner)));
}

template <class T, class K>
windowed_stream<T, K, streaming::global_window> keyed_stream<T, K>::count_window(
  std::int64_t size) {
  if (size <= 0)
    throw std::invalid_argument("The size of a count window must be positive.");
  auto windowed = window(global_windows::create());
  windowed.trigger(purging_trigger::of(count_trigger::of(size)));
  return windowed;
}

template <class T, class K>
windowed_stream<T, K, streaming::global_window> keyed_stream<T, K>::count_window(
  std::int64_t size, std::int64_t slide) {
  if (size <= 0 || slide <= 0)
    throw std::invalid_argument("The size and slide of a count window must be positive.");
  auto windowed = window(global_windows::create());
  windowed.evictor(count_evictor::of(size));
  windowed.trigger(count_trigger::of(slide));
  return windowed;
}

} // namespace flint::api
