#pragma once
/// Flink's WindowOperator and EvictingWindowOperator for keyed streams (window_all: the same with
/// a constant key at parallelism 1). Each element goes to the windows its assigner gives (for
/// session windows: merged through the key's merging_window_set), unless the window is past its
/// allowed lateness; the trigger decides per element and per timer whether the window fires
/// (the window function runs over its contents, output timestamp = window.max_timestamp()) and
/// whether its contents go; a cleanup timer at max_timestamp + allowed lateness drops the
/// window's contents, trigger state and per-window state. Elements late for every window are
/// counted as dropped (numLateRecordsDropped), or go to the late-data side output when set.
///
/// Everything lives in the keyed state backend, so windows checkpoint, restore and rescale in
/// both backends with no code here: contents in "window-contents" under key bytes + window bytes
/// (the window is the namespace; a list's elements each under that + their ordinal), the trigger's state in "window-trigger:<name>" likewise, a
/// merging assigner's window set in "window-merging-set" under the key, and the timers
/// (namespace: the window's bytes) in the timer service "window-timers".
/// With the hashmap backend a reduced or aggregated (non-merging) window's contents live typed in
/// a hash table between snapshots (window_accumulators.hpp) and go into "window-contents" at each
/// snapshot, so the checkpointed entries are the same.

#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/operator_timers.hpp"
#include "runtime/streaming/windowing/default_trigger.hpp"
#include "runtime/streaming/windowing/evictor.hpp"
#include "runtime/streaming/windowing/merging_window_set.hpp"
#include "runtime/streaming/windowing/trigger.hpp"
#include "runtime/streaming/windowing/window_accumulators.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"
#include "runtime/streaming/windowing/window_contents.hpp"
#include "runtime/streaming/windowing/window_functions.hpp"
#include "runtime/streaming/windowing/window_lateness.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace flint::streaming {

namespace window_detail {
/// The typed accumulators of a reduced or aggregated window (contents with a `state_type`); a
/// placeholder for list contents, which have none.
template <class Contents, class = void>
struct accumulators_of {
  struct type {};
};
template <class Contents>
struct accumulators_of<Contents, std::void_t<typename Contents::state_type>> {
  using type = window_accumulators<typename Contents::state_type>;
};
} // namespace window_detail

/// How a window operator is configured (Flink's WindowOperatorBuilder): shared by its subtasks,
/// so the assigner, trigger and evictor hold only configuration.
template <class In, class W>
struct window_settings {
  std::shared_ptr<const window_assigner<W>> assigner;
  /// None: the assigner's default trigger.
  std::shared_ptr<streaming::trigger<In, W>> window_trigger;
  /// Set: the window keeps every element (list contents) and the evictor thins them on a fire.
  std::shared_ptr<streaming::evictor<In, W>> window_evictor;
  /// Event time only: how long after its end a window still takes elements (and fires again).
  std::int64_t allowed_lateness = 0;
  /// Elements too late for every window go here instead of being dropped.
  std::optional<output_tag<In>> late_data_tag;
};

/// `Contents` is the window's state (list_contents, reducing_contents, aggregating_contents);
/// `fn` turns its result into `Out`s.
template <class K, class Contents, class Out, class W>
class window_operator final : public one_input_operator<typename Contents::element_type> {
public:
  using In = typename Contents::element_type;
  using result_type = typename Contents::result_type;
  using function_type = internal_window_function<result_type, Out, K, W>;

  window_operator(window_settings<In, W> settings, Contents contents,
                  std::unique_ptr<function_type> fn, std::function<K(const In&)> key,
                  const operator_context& ctx, std::unique_ptr<output<Out>> out)
    : settings_(checked(std::move(settings))),
      windows_of_(*settings_.assigner),
      is_event_time_(settings_.assigner->is_event_time()),
      merging_(settings_.assigner->is_merging()),
      default_event_time_trigger_(
        dynamic_cast<const event_time_trigger<In, W>*>(settings_.window_trigger.get()) != nullptr),
      contents_(std::move(contents)),
      fn_(std::move(fn)),
      key_(std::move(key)),
      max_parallelism_(ctx.key_group_max_parallelism),
      range_(ctx.key_groups),
      backend_(ctx.state_backend, ctx.key_groups),
      // Heap state only: a RocksDB backend keeps state larger than memory, so its windows stay
      // in RocksDB (behind its own cache). Merging windows move contents between windows
      // through the backend.
      heap_accumulators_(!Contents::keeps_elements && !merging_
                         && ctx.state_backend.type == "hashmap"),
      timers_(backend_, "window-timers", ctx.key_groups, ctx.processing_time),
      time_(ctx.time),
      trigger_context_(*this),
      window_store_(&window_key_, "window-", !merging_),
      global_store_(&current_, ""),
      process_context_(ctx, window_store_, global_store_),
      out_(std::move(out)) {
    if (settings_.window_evictor && !Contents::keeps_elements)
      throw std::logic_error("an evictor needs the window to keep its elements");
    if (settings_.late_data_tag)
      late_output_ = make_side_output<In>(ctx, *settings_.late_data_tag);
    timers_.set_handlers([this](const timer& t) { on_timer(t, true); },
                         [this](const timer& t) { on_timer(t, false); });
    process_context_.set_clocks([this] { return timers_.current_watermark(); },
                                [this] { return timers_.current_processing_time(); });
  }

  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.has_keyed_state())
      return;
    if (auto restored = backend_.get().restore(restore.keyed_handles()); !restored)
      throw std::runtime_error(restored.error().message);
    restored_ = true;
    // The slicing window operator's accumulators per key and slice (slicing_window_operator.hpp)
    // are no window's contents: refused rather than dropped.
    auto& backend = backend_.get();
    const auto sliced = backend.register_state("window-slice-contents");
    for (int group = range_.first; group <= range_.last; ++group) {
      bool any = false;
      backend.for_each(sliced, group, {}, [&](std::string_view, std::string_view) { any = true; });
      if (any)
        throw std::runtime_error(
          "cannot restore the state of a slicing window operator (\"window-slice-contents\", "
          "one accumulator per key and slice) into a window operator with one accumulator per "
          "window: restore this savepoint with pipeline.window.agg-phase-strategy AUTO or "
          "TWO_PHASE and state.backend.type hashmap");
    }
  }

  void open() override {
    current_.backend = &backend_.get();
    window_key_.backend = current_.backend;
    contents_state_ = current_.backend->register_state("window-contents");
    if constexpr (Contents::keeps_elements)
      list_size_state_ = current_.backend->register_state("window-contents-size");
    merging_state_ = current_.backend->register_state("window-merging-set");
    timers_.open();
  }

  void process_watermark(std::int64_t watermark) override {
    timers_.advance_watermark(watermark);
    this->emit_watermark(watermark);
  }

  void process_element(const In& value) override {
    K key = key_(value);
    set_key(key);
    const auto timestamp =
      time_ != nullptr && time_->has_timestamp ? time_->timestamp : no_timestamp;
    windows_.clear();
    // Event-time assigners do not read the clock: no clock read per record for them.
    windows_of_(value, timestamp, is_event_time_ ? 0 : timers_.current_processing_time(),
                windows_);
    bool skipped = true;
    if (merging_) {
      auto set = load_window_set();
      for (const W& window : windows_) {
        W actual = set.add_window(window, [&](const W& result, const std::vector<W>& merged,
                                              const W& state_result,
                                              const std::vector<W>& merged_state) {
          merge_windows(result, merged, state_result, merged_state);
        });
        if (window_late(actual)) {
          set.retire_window(actual);
          continue;
        }
        skipped = false;
        on_element(key, value, timestamp, actual, *set.get_state_window(actual));
      }
      store_window_set(set);
    } else {
      for (const W& window : windows_) {
        if (window_late(window))
          continue;
        skipped = false;
        on_element(key, value, timestamp, window, window);
      }
    }
    if (skipped && is_element_late(timestamp, settings_.allowed_lateness, is_event_time_,
                                   timers_.current_watermark())) {
      if (late_output_)
        late_output_->collect_ref(value);
      else
        ++late_dropped_;
    }
  }

  std::int64_t late_records_dropped() const noexcept override { return late_dropped_; }

  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    state::operator_snapshot s;
    if constexpr (!Contents::keeps_elements)
      if (heap_accumulators_)
        accumulators_.flush(backend_.get(), contents_state_,
                            [](const auto& value, std::string& bytes) {
                              Contents::encode(value, bytes);
                            });
    s.keyed_upload = backend_.get().snapshot(checkpoint_id);
    return s;
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    backend_.notify_checkpoint_complete(checkpoint_id);
  }

  /// The timers in flight (for tests): event time, processing time.
  std::pair<std::size_t, std::size_t> num_timers() {
    return {timers_.service().num_event_time_timers(),
            timers_.service().num_processing_time_timers()};
  }

private:
  /// The trigger's and evictor's view of the current key and window (Flink's WindowOperator
  /// Context): timers with the window as namespace, state under key + window.
  class context final : public on_merge_context, public evictor_context {
  public:
    explicit context(window_operator& op) : op_(op) {}

    void bind(const W& window, const std::vector<W>* merged = nullptr) {
      window_bytes_.clear();
      window.append_to(window_bytes_);
      merged_ = merged;
    }

    std::int64_t current_processing_time() const override {
      return op_.timers_.current_processing_time();
    }
    std::int64_t current_watermark() const override { return op_.timers_.current_watermark(); }

    void register_processing_time_timer(std::int64_t time) override {
      op_.timers_.register_processing_time_timer(op_.current_.key_group, op_.current_.view(),
                                                 window_bytes_, time);
    }
    void register_event_time_timer(std::int64_t time) override {
      op_.timers_.register_event_time_timer(op_.current_.key_group, op_.current_.view(),
                                            window_bytes_, time);
    }
    void delete_processing_time_timer(std::int64_t time) override {
      op_.timers_.delete_processing_time_timer(op_.current_.key_group, op_.current_.view(),
                                               window_bytes_, time);
    }
    void delete_event_time_timer(std::int64_t time) override {
      op_.timers_.delete_event_time_timer(op_.current_.key_group, op_.current_.view(),
                                          window_bytes_, time);
    }

    bool get_partitioned_state(std::string_view name, std::string& value) override {
      value.clear();
      return op_.backend().get(op_.trigger_state(name), op_.current_.key_group,
                               op_.namespaced(window_bytes_), value);
    }
    void put_partitioned_state(std::string_view name, std::string_view value) override {
      op_.backend().put(op_.trigger_state(name), op_.current_.key_group,
                        op_.namespaced(window_bytes_), value);
    }
    void clear_partitioned_state(std::string_view name) override {
      op_.backend().remove(op_.trigger_state(name), op_.current_.key_group,
                           op_.namespaced(window_bytes_));
    }

    void merge_partitioned_state(std::string_view name, const bytes_reduce& reduce) override {
      if (merged_ == nullptr)
        throw std::logic_error("merge_partitioned_state outside of on_merge");
      auto id = op_.trigger_state(name);
      auto& backend = op_.backend();
      auto group = op_.current_.key_group;
      std::string merged_value;
      bool has = backend.get(id, group, op_.namespaced(window_bytes_), merged_value);
      std::string window_bytes;
      for (const W& window : *merged_) {
        window_bytes.clear();
        window.append_to(window_bytes);
        std::string key(op_.namespaced(window_bytes));
        std::string value;
        if (!backend.get(id, group, key, value))
          continue;
        merged_value = has ? reduce(merged_value, value) : std::move(value);
        has = true;
        backend.remove(id, group, key);
      }
      if (has)
        backend.put(id, group, op_.namespaced(window_bytes_), merged_value);
    }

  private:
    window_operator& op_;
    std::string window_bytes_;
    const std::vector<W>* merged_ = nullptr;
  };

  static window_settings<In, W> checked(window_settings<In, W> s) {
    if (!s.assigner)
      throw std::logic_error("a window operator without an assigner");
    if (!s.window_trigger)
      s.window_trigger = make_default_trigger<In, W>(*s.assigner);
    if (s.allowed_lateness < 0)
      throw std::invalid_argument("The allowed lateness cannot be negative.");
    if (s.assigner->is_merging() && !s.window_trigger->can_merge())
      throw std::invalid_argument(
        "A merging window assigner cannot be used with a trigger that does not support merging.");
    return s;
  }

  state::keyed_state_backend& backend() { return *current_.backend; }

  void set_key(const K& key) {
    auto group = assign_to_key_group(key_hash(key), max_parallelism_);
    if (!range_.contains(group))
      throw std::logic_error("Key group " + std::to_string(group)
                             + " is not in this subtask's range: the record reached the wrong "
                               "subtask");
    current_.key_group = group;
    window_key_.key_group = group;
    current_.bytes.clear();
    type_serializer<K>::write(key, current_.bytes);
  }

  /// The backend key of the current key and a window's bytes (valid until the next call).
  std::string_view namespaced(std::string_view window_bytes) {
    namespaced_.assign(current_.bytes.data(), current_.bytes.size());
    namespaced_.append(window_bytes);
    return namespaced_;
  }
  std::string_view namespaced(const W& window) {
    window_bytes_.clear();
    window.append_to(window_bytes_);
    return namespaced(window_bytes_);
  }

  std::uint32_t trigger_state(std::string_view name) {
    auto it = trigger_states_.find(name);
    if (it == trigger_states_.end())
      it = trigger_states_
             .emplace(std::string(name),
                      backend().register_state("window-trigger:" + std::string(name)))
             .first;
    return it->second;
  }

  bool window_late(const W& window) const {
    return is_window_late(window, settings_.allowed_lateness, is_event_time_,
                          timers_.current_watermark());
  }

  void on_element(const K& key, const In& value, std::int64_t timestamp, const W& window,
                  const W& state_window) {
    // A window that had contents already got its cleanup timer (and, from the default
    // event-time trigger, its timer at the end) with its first element: only a merge deletes
    // those while contents stay, and a timer that fires clears the contents or finds the window
    // ended. Registering them again per element would only find them in the timer set.
    const bool registered = add_to_contents(state_window, value) && !merging_;
    // After a restore the watermark starts over: a window that fired before the snapshot (and
    // is kept for its allowed lateness) has contents but no timer left, and EventTimeTrigger
    // registers one again. TODO(perf): only for windows restored, not every one since.
    if (registered && default_event_time_trigger_ && !restored_
        && window.max_timestamp() > timers_.current_watermark())
      return;
    trigger_context_.bind(window);
    auto result = settings_.window_trigger->on_element(value, timestamp, window, trigger_context_);
    if (is_fire(result))
      emit_contents(key, window, state_window);
    if (is_purge(result))
      remove_contents(state_window);
    // The context is still bound to `window` (a firing does not rebind it).
    if (!registered)
      register_cleanup_timer(window, true);
  }

  void on_timer(const timer& t, bool event_time) {
    current_.key_group = t.key_group;
    window_key_.key_group = t.key_group;
    current_.bytes.assign(t.key.begin(), t.key.end());
    K key = keyed_state_detail::from_bytes<K>(t.key);
    auto window = W::from_bytes(t.ns);
    if (!window)
      throw std::logic_error("a window timer whose namespace is not a window");
    std::optional<merging_window_set<W>> set;
    W state_window = *window;
    if (merging_) {
      set.emplace(load_window_set());
      auto found = set->get_state_window(*window);
      // The window merged into another since: its timers are stale.
      if (!found)
        return;
      state_window = *found;
    }
    trigger_context_.bind(*window);
    auto result = event_time
      ? settings_.window_trigger->on_event_time(t.timestamp, *window, trigger_context_)
      : settings_.window_trigger->on_processing_time(t.timestamp, *window, trigger_context_);
    if (is_fire(result))
      emit_contents(key, *window, state_window);
    if (is_purge(result))
      remove_contents(state_window);
    if (event_time == is_event_time_
        && is_cleanup_time(*window, t.timestamp, settings_.allowed_lateness, is_event_time_))
      clear_all_state(*window, state_window, set ? &*set : nullptr);
    if (set)
      store_window_set(*set);
  }

  /// Flink's MergingWindowSet.MergeFunction of WindowOperator: the trigger merges its state and
  /// timers into `result`, the merged windows' trigger state and cleanup timers go, and their
  /// contents join `state_result`'s.
  void merge_windows(const W& result, const std::vector<W>& merged, const W& state_result,
                     const std::vector<W>& merged_state) {
    if (is_event_time_
        && cleanup_time(result, settings_.allowed_lateness, true) <= timers_.current_watermark())
      throw std::logic_error("The end timestamp of an event-time window cannot become earlier "
                             "than the current watermark by merging. Current watermark: "
                             + std::to_string(timers_.current_watermark())
                             + " window: " + result.to_string());
    if (!is_event_time_ && result.max_timestamp() <= timers_.current_processing_time())
      throw std::logic_error("The end timestamp of a processing-time window cannot become "
                             "earlier than the current processing time by merging. Current "
                             "processing time: "
                             + std::to_string(timers_.current_processing_time())
                             + " window: " + result.to_string());
    trigger_context_.bind(result, &merged);
    settings_.window_trigger->on_merge(result, trigger_context_);
    for (const W& window : merged) {
      trigger_context_.bind(window);
      settings_.window_trigger->clear(window, trigger_context_);
      delete_cleanup_timer(window);
    }
    merge_contents(state_result, merged_state);
  }

  // -- window contents ---------------------------------------------------------------------------
  // A reduced or aggregated window is one entry under key + window. A window keeping its elements
  // stores each as an entry of its own under key + window + its ordinal (ordered bytes, so a
  // prefix listing returns them in arrival order), and its size under key + window in
  // "window-contents-size": adding an element writes it alone, as Flink's heap ListState appends.

  /// Whether the window had contents before.
  bool add_to_contents(const W& state_window, const In& value) {
    static const element_time none;
    const auto& time = time_ != nullptr ? *time_ : none;
    if constexpr (Contents::keeps_elements) {
      element_.clear();
      contents_.add(element_, false, value, time);
      std::string prefix(namespaced(state_window));
      return push_elements(prefix, std::span<const std::string>(&element_, 1));
    } else {
      auto key = namespaced(state_window);
      if (heap_accumulators_) {
        // One probe per element; the backend is read only for a window the table does not
        // have (its first element, or the first since a snapshot or restore).
        if (auto* e = accumulators_.find(key)) {
          contents_.add_to(e->value, value);
          return true;
        }
        scratch_.clear();
        if (backend().get(contents_state_, current_.key_group, key, scratch_)) {
          auto acc = contents_.decode(scratch_);
          contents_.add_to(acc, value);
          accumulators_.insert(key, current_.key_group, std::move(acc), true);
          return true;
        }
        accumulators_.insert(key, current_.key_group, contents_.create(value), false);
        return false;
      }
      scratch_.clear();
      bool exists = backend().get(contents_state_, current_.key_group, key, scratch_);
      contents_.add(scratch_, exists, value, time);
      backend().put(contents_state_, current_.key_group, key, scratch_);
      return exists;
    }
  }

  /// The window's contents as the policy reads them (a list's elements one after another);
  /// false when it has none.
  bool read_contents(const W& state_window, std::string& bytes) {
    bytes.clear();
    if constexpr (Contents::keeps_elements) {
      bool any = false;
      backend().for_each(contents_state_, current_.key_group, namespaced(state_window),
                         [&](std::string_view, std::string_view element) {
                           bytes.append(element);
                           any = true;
                         });
      return any;
    } else {
      return backend().get(contents_state_, current_.key_group, namespaced(state_window), bytes);
    }
  }

  void remove_contents(const W& state_window) {
    if constexpr (Contents::keeps_elements) {
      std::string prefix(namespaced(state_window));
      take_elements(prefix);
    } else {
      auto key = namespaced(state_window);
      bool in_backend = true;
      if (heap_accumulators_ && accumulators_.erase(key, in_backend) && !in_backend)
        return;
      backend().remove(contents_state_, current_.key_group, key);
    }
  }

  /// The contents of the merged state windows join `target`'s.
  void merge_contents(const W& target, const std::vector<W>& sources) {
    std::string target_key(namespaced(target));
    if constexpr (Contents::keeps_elements) {
      for (const W& source_window : sources) {
        std::string source_key(namespaced(source_window));
        auto elements = take_elements(source_key);
        push_elements(target_key, elements);
      }
    } else {
      std::string merged;
      bool exists = backend().get(contents_state_, current_.key_group, target_key, merged);
      for (const W& source_window : sources) {
        std::string source_key(namespaced(source_window));
        std::string source;
        if (!backend().get(contents_state_, current_.key_group, source_key, source))
          continue;
        contents_.merge_into(merged, exists, source);
        exists = true;
        backend().remove(contents_state_, current_.key_group, source_key);
      }
      if (exists)
        backend().put(contents_state_, current_.key_group, target_key, merged);
    }
  }

  /// Appends encoded elements to the list under `prefix` (key + window).
  /// Appends `elements` to the list under `prefix`; whether it had elements before.
  bool push_elements(const std::string& prefix, std::span<const std::string> elements) {
    if (elements.empty())
      return false;
    auto& b = backend();
    std::string size_bytes;
    std::int64_t size = 0;
    if (b.get(list_size_state_, current_.key_group, prefix, size_bytes) && size_bytes.size() == 8)
      size = read_ordered_int64(size_bytes, 0);
    for (const auto& element : elements) {
      entry_key_ = prefix;
      append_ordered_int64(entry_key_, size++);
      b.put(contents_state_, current_.key_group, entry_key_, element);
    }
    const bool had = size > static_cast<std::int64_t>(elements.size());
    size_bytes.clear();
    append_ordered_int64(size_bytes, size);
    b.put(list_size_state_, current_.key_group, prefix, size_bytes);
    return had;
  }

  /// Removes the list under `prefix` and returns its encoded elements in order.
  std::vector<std::string> take_elements(const std::string& prefix) {
    auto& b = backend();
    std::vector<std::string> keys;
    std::vector<std::string> elements;
    b.for_each(contents_state_, current_.key_group, prefix,
               [&](std::string_view k, std::string_view element) {
                 keys.emplace_back(k);
                 elements.emplace_back(element);
               });
    for (const auto& k : keys)
      b.remove(contents_state_, current_.key_group, k);
    b.remove(list_size_state_, current_.key_group, prefix);
    return elements;
  }

  /// Runs the window function over the window's contents, if it has any.
  void emit_contents(const K& key, const W& window, const W& state_window) {
    if constexpr (!Contents::keeps_elements) {
      if (heap_accumulators_) {
        if (auto* e = accumulators_.find(namespaced(state_window))) {
          auto result = contents_.result_of(e->value);
          call_function(key, window, result);
          return;
        }
      }
    }
    std::string bytes;
    if (!read_contents(state_window, bytes))
      return;
    if constexpr (Contents::keeps_elements) {
      if (settings_.window_evictor) {
        emit_evicting(key, window, state_window, bytes);
        return;
      }
    }
    call_function(key, window, contents_.result(bytes));
  }

  /// Flink's EvictingWindowOperator.emitWindowContents: evict before, the function over what is
  /// left, evict after, and the survivors are the window's contents.
  void emit_evicting(const K& key, const W& window, const W& state_window,
                     const std::string& bytes) {
    if constexpr (Contents::keeps_elements) {
      auto elements = contents_.elements(bytes);
      settings_.window_evictor->evict_before(elements, window, trigger_context_);
      result_type values;
      values.reserve(elements.size());
      for (const auto& e : elements)
        values.push_back(e.value);
      call_function(key, window, values);
      settings_.window_evictor->evict_after(elements, window, trigger_context_);
      // Flink clears the window and adds the survivors back.
      std::string prefix(namespaced(state_window));
      take_elements(prefix);
      std::vector<std::string> survivors;
      survivors.reserve(elements.size());
      for (const auto& e : elements)
        survivors.push_back(contents_.encode({e}));
      push_elements(prefix, survivors);
    }
  }

  void call_function(const K& key, const W& window, const result_type& input) {
    bind_window_state(window);
    process_context_.set_window(&window);
    std::optional<element_time> saved;
    if (time_ != nullptr) {
      saved = *time_;
      time_->set(window.max_timestamp());
    }
    fn_->process(key, window, process_context_, input, *out_);
    if (saved)
      *time_ = *saved;
    process_context_.set_window(nullptr);
  }

  void bind_window_state(const W& window) {
    window_key_.bytes = current_.bytes;
    window_bytes_.clear();
    window.append_to(window_bytes_);
    window_key_.bytes.insert(window_key_.bytes.end(), window_bytes_.begin(), window_bytes_.end());
  }

  /// Flink's clearAllState: contents, trigger state, the function's per-window state, and the
  /// window's place in the merging set.
  void clear_all_state(const W& window, const W& state_window, merging_window_set<W>* set) {
    remove_contents(state_window);
    trigger_context_.bind(window);
    settings_.window_trigger->clear(window, trigger_context_);
    bind_window_state(window);
    process_context_.set_window(&window);
    fn_->clear(window, process_context_);
    process_context_.set_window(nullptr);
    if (!merging_)
      window_store_.clear_all();
    if (set != nullptr)
      set->retire_window(window);
  }

  void register_cleanup_timer(const W& window, bool bound) {
    auto time = cleanup_time(window, settings_.allowed_lateness, is_event_time_);
    if (time == std::numeric_limits<std::int64_t>::max())
      return;
    if (!bound)
      trigger_context_.bind(window);
    if (is_event_time_)
      trigger_context_.register_event_time_timer(time);
    else
      trigger_context_.register_processing_time_timer(time);
  }

  void delete_cleanup_timer(const W& window) {
    auto time = cleanup_time(window, settings_.allowed_lateness, is_event_time_);
    if (time == std::numeric_limits<std::int64_t>::max())
      return;
    trigger_context_.bind(window);
    if (is_event_time_)
      trigger_context_.delete_event_time_timer(time);
    else
      trigger_context_.delete_processing_time_timer(time);
  }

  merging_window_set<W> load_window_set() {
    std::string bytes;
    backend().get(merging_state_, current_.key_group, current_.view(), bytes);
    auto set = merging_window_set<W>::restore(*settings_.assigner, bytes);
    if (!set)
      throw std::runtime_error(set.error().message);
    return std::move(*set);
  }

  void store_window_set(merging_window_set<W>& set) {
    auto bytes = set.persist();
    if (!bytes)
      return;
    if (bytes->empty())
      backend().remove(merging_state_, current_.key_group, current_.view());
    else
      backend().put(merging_state_, current_.key_group, current_.view(), *bytes);
  }

  window_settings<In, W> settings_;
  windows_of<In, W> windows_of_;
  bool is_event_time_;
  bool merging_;
  /// The trigger is Flink's EventTimeTrigger: its on_element for a window that has contents
  /// and has not ended only registers the timer it registered with the window's first element.
  bool default_event_time_trigger_;
  /// Restored from a snapshot (see on_element).
  bool restored_ = false;
  Contents contents_;
  std::unique_ptr<function_type> fn_;
  std::function<K(const In&)> key_;
  int max_parallelism_;
  key_group_range range_;
  keyed_backend_holder backend_;
  /// Reduced or aggregated contents kept typed in `accumulators_` (see window_accumulators.hpp).
  bool heap_accumulators_;
  typename window_detail::accumulators_of<Contents>::type accumulators_;
  operator_timers timers_;
  element_time* time_;
  /// The key being processed (its bytes), and the key with the window for per-window state.
  keyed_state_detail::current_key current_;
  keyed_state_detail::current_key window_key_;
  std::uint32_t contents_state_ = 0;
  std::uint32_t list_size_state_ = 0;
  std::uint32_t merging_state_ = 0;
  std::map<std::string, std::uint32_t, std::less<>> trigger_states_;
  context trigger_context_;
  window_state_store window_store_;
  window_state_store global_store_;
  window_context<W> process_context_;
  output_ref<Out> out_;
  std::unique_ptr<output<In>> late_output_;
  std::int64_t late_dropped_ = 0;
  /// Reused buffers: the element's windows, backend keys, contents bytes.
  std::vector<W> windows_;
  std::string namespaced_;
  std::string window_bytes_;
  std::string scratch_;
  std::string element_;
  std::string entry_key_;
};

} // namespace flint::streaming
