#pragma once
/// The functions a window operator evaluates a window with (Flink's ProcessWindowFunction,
/// WindowFunction, AggregateFunction and the InternalWindowFunction wrappers the operator calls),
/// and what a process function sees of its window (ProcessWindowFunction.Context: the window,
/// the clocks, per-window and per-key state, side outputs).

#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operator_api.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming {

/// Flink's AggregateFunction<IN, ACC, OUT> as a base class; `aggregate` takes any class with
/// these four members as well.
template <class In, class Acc, class Out>
class aggregate_function {
public:
  using accumulator_type = Acc;
  virtual ~aggregate_function() = default;
  virtual Acc create_accumulator() = 0;
  virtual Acc add(const In& value, Acc accumulator) = 0;
  virtual Out get_result(const Acc& accumulator) = 0;
  virtual Acc merge(Acc a, Acc b) = 0;
};

/// Keyed state scoped to the key, or to the key and window (Flink's KeyedStateStore of
/// ProcessWindowFunction.Context): value, list and map states by name.
class window_state_store {
public:
  /// States over `key` (bytes kept current by the operator); names get `prefix`.
  window_state_store(keyed_state_detail::current_key* key, std::string prefix, bool allowed = true)
    : key_(key),
      prefix_(std::move(prefix)),
      allowed_(allowed) {}

  template <class V>
  value_state<V> get_state(const std::string& name) {
    return value_state<V>(key_, register_state(name, "value", false));
  }
  template <class V>
  list_state<V> get_list_state(const std::string& name) {
    return list_state<V>(key_, register_state(name, "list", false));
  }
  template <class UK, class UV>
  map_state<UK, UV> get_map_state(const std::string& name) {
    return map_state<UK, UV>(key_, register_state(name, "map", true));
  }

  /// Removes every state this store handed out, of the current key (and window): a window's
  /// own state goes with the window.
  void clear_all() {
    auto& backend = *key_->backend;
    for (auto [id, prefixed] : registered_) {
      if (!prefixed) {
        backend.remove(id, key_->key_group, key_->view());
        continue;
      }
      std::vector<std::string> keys;
      backend.for_each(id, key_->key_group, key_->view(),
                       [&](std::string_view k, std::string_view) { keys.emplace_back(k); });
      for (const auto& k : keys)
        backend.remove(id, key_->key_group, k);
    }
  }

private:
  std::uint32_t register_state(const std::string& name, const char* kind, bool prefixed) {
    if (!allowed_)
      // Flink's MergingWindowStateStore: merged windows could not merge the user's states.
      throw std::logic_error("Per-window state is not allowed when using merging windows.");
    if (key_->backend == nullptr)
      throw std::logic_error("window state before the operator opened");
    auto id = key_->backend->register_state(prefix_ + kind + ":" + name);
    registered_.insert({id, prefixed});
    return id;
  }

  keyed_state_detail::current_key* key_;
  std::string prefix_;
  bool allowed_;
  std::set<std::pair<std::uint32_t, bool>> registered_;
};

/// What a process window function sees (Flink's ProcessWindowFunction.Context), valid during
/// its call. The operator sets the window and the clocks.
template <class W>
class window_context {
public:
  window_context(const operator_context& ctx, window_state_store& window_state,
                 window_state_store& global_state)
    : operator_(std::make_shared<operator_context>(ctx)),
      window_state_(window_state),
      global_state_(global_state) {}

  /// The window being evaluated.
  const W& window() const { return *window_; }
  std::int64_t current_watermark() const { return watermark_(); }
  std::int64_t current_processing_time() const { return processing_time_(); }
  /// State of the current key and window, removed when the window is cleaned up.
  window_state_store& window_state() { return window_state_; }
  /// State of the current key, across its windows.
  window_state_store& global_state() { return global_state_; }
  /// Emits `value` to side output `tag`, with the window's timestamp.
  template <class X>
  void output(const output_tag<X>& tag, const X& value) {
    auto it = side_outputs_.find(tag.id());
    if (it == side_outputs_.end()) {
      std::shared_ptr<streaming::output<X>> made = make_side_output<X>(*operator_, tag);
      it = side_outputs_.emplace(tag.id(), std::move(made)).first;
    }
    static_cast<streaming::output<X>*>(it->second.get())->collect_ref(value);
  }

  void set_window(const W* window) { window_ = window; }
  void set_clocks(std::function<std::int64_t()> watermark,
                  std::function<std::int64_t()> processing_time) {
    watermark_ = std::move(watermark);
    processing_time_ = std::move(processing_time);
  }

private:
  std::shared_ptr<const operator_context> operator_;
  window_state_store& window_state_;
  window_state_store& global_state_;
  std::map<std::string, std::shared_ptr<void>> side_outputs_;
  const W* window_ = nullptr;
  std::function<std::int64_t()> watermark_;
  std::function<std::int64_t()> processing_time_;
};

/// Flink's ProcessWindowFunction<IN, OUT, KEY, W>: all elements of a window at once, with its
/// context. Subclass it (copyable: each subtask gets a copy).
template <class In, class Out, class K, class W>
class process_window_function {
public:
  using context = window_context<W>;
  using input_type = In;
  using output_type = Out;
  virtual ~process_window_function() = default;
  /// The window of `key` fired: `elements` are its contents (after the evictor's evict_before).
  virtual void process(const K& key, context& ctx, const std::vector<In>& elements,
                       output<Out>& out) = 0;
  /// The window is cleaned up: drop what it kept in ctx.window_state() (the operator also
  /// removes every window state the store handed out).
  virtual void clear(context& ctx) { (void)ctx; }
};

/// Flink's ProcessAllWindowFunction<IN, OUT, W>, for window_all.
template <class In, class Out, class W>
class process_all_window_function {
public:
  using context = window_context<W>;
  using input_type = In;
  using output_type = Out;
  virtual ~process_all_window_function() = default;
  virtual void process(context& ctx, const std::vector<In>& elements, output<Out>& out) = 0;
  virtual void clear(context& ctx) { (void)ctx; }
};

/// What the operator calls (Flink's InternalWindowFunction): `R` is what the window contents
/// give — all elements, or the one reduced or aggregated value.
template <class R, class Out, class K, class W>
class internal_window_function {
public:
  virtual ~internal_window_function() = default;
  virtual void process(const K& key, const W& window, window_context<W>& ctx, const R& input,
                       output<Out>& out) = 0;
  virtual void clear(const W& window, window_context<W>& ctx) {
    (void)window;
    (void)ctx;
  }
};

/// Emits the reduced or aggregated value itself (reduce, aggregate without a process function).
template <class R, class K, class W>
class pass_through_window_function final : public internal_window_function<R, R, K, W> {
public:
  void process(const K&, const W&, window_context<W>&, const R& input,
               output<R>& out) override {
    out.collect_ref(input);
  }
};

/// The user's process window function over all elements (Flink's
/// InternalIterableProcessWindowFunction), or over the one pre-aggregated value (Flink's
/// InternalSingleValueProcessWindowFunction) when `R` is not a vector of its input.
template <class R, class Out, class K, class W, class F>
class user_process_window_function final : public internal_window_function<R, Out, K, W> {
public:
  explicit user_process_window_function(F fn) : fn_(std::move(fn)) {}
  void process(const K& key, const W&, window_context<W>& ctx, const R& input,
               output<Out>& out) override {
    if constexpr (std::is_same_v<R, std::vector<typename F::input_type>>) {
      fn_.process(key, ctx, input, out);
    } else {
      single_.assign(1, input);
      fn_.process(key, ctx, single_, out);
    }
  }
  void clear(const W&, window_context<W>& ctx) override { fn_.clear(ctx); }

private:
  F fn_;
  std::vector<typename F::input_type> single_;
};

/// A process_all_window_function seen as a keyed one (window_all's key is a constant).
template <class K, class W, class F>
class all_to_keyed_process final
  : public process_window_function<typename F::input_type, typename F::output_type, K, W> {
public:
  using base = process_window_function<typename F::input_type, typename F::output_type, K, W>;
  explicit all_to_keyed_process(F fn) : fn_(std::move(fn)) {}
  void process(const K&, typename base::context& ctx,
               const std::vector<typename F::input_type>& elements,
               output<typename F::output_type>& out) override {
    fn_.process(ctx, elements, out);
  }
  void clear(typename base::context& ctx) override { fn_.clear(ctx); }

private:
  F fn_;
};

/// Flink's WindowFunction (`apply`): `fn(key, window, elements, out)`.
template <class In, class Out, class K, class W, class F>
class apply_window_function final : public internal_window_function<std::vector<In>, Out, K, W> {
public:
  explicit apply_window_function(F fn) : fn_(std::move(fn)) {}
  void process(const K& key, const W& window, window_context<W>&, const std::vector<In>& input,
               output<Out>& out) override {
    fn_(key, window, input, out);
  }

private:
  F fn_;
};

/// With an evictor a window keeps every element: `fold` turns the elements left into what
/// `inner` takes (the reduced or aggregated value), as Flink's EvictingWindowOperator runs a
/// reduce or aggregate over its list.
template <class In, class R, class Out, class K, class W>
class folding_window_function final : public internal_window_function<std::vector<In>, Out, K, W> {
public:
  folding_window_function(std::function<R(const std::vector<In>&)> fold,
                          std::unique_ptr<internal_window_function<R, Out, K, W>> inner)
    : fold_(std::move(fold)),
      inner_(std::move(inner)) {}
  void process(const K& key, const W& window, window_context<W>& ctx,
               const std::vector<In>& input, output<Out>& out) override {
    // An evictor may leave nothing: there is nothing to reduce then.
    if (input.empty())
      return;
    inner_->process(key, window, ctx, fold_(input), out);
  }
  void clear(const W& window, window_context<W>& ctx) override { inner_->clear(window, ctx); }

private:
  std::function<R(const std::vector<In>&)> fold_;
  std::unique_ptr<internal_window_function<R, Out, K, W>> inner_;
};

} // namespace flint::streaming
