#pragma once
/// Flink's KeyedProcessFunction and its keyed state (ValueState, ListState, MapState), run by a
/// keyed process operator (Flink's KeyedProcessOperator) over a keyed_state_backend: every state
/// is scoped to the key of the record being processed, kept per key group, checkpointed with the
/// backend (`state.backend.type`: hashmap or rocksdb) and restored — also at another
/// parallelism — before the function opens. Header-only: the API instantiates it for the user's
/// types. Timers (Flink's TimerService) are kept in the same backend, one per (key, time), and
/// fire `on_timer` between records, never concurrently with `process_element`.

#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/operator_timers.hpp"
#include "runtime/streaming/type_serializer.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::streaming {

namespace keyed_state_detail {

/// Where the current record's key is, for the states' calls (the operator updates it).
struct current_key {
  state::keyed_state_backend* backend = nullptr;
  std::int32_t key_group = 0;
  std::vector<char> bytes;
  std::string_view view() const { return {bytes.data(), bytes.size()}; }
};

template <class V>
std::vector<char> to_bytes(const V& v) {
  std::vector<char> out;
  type_serializer<V>::write(v, out);
  return out;
}

template <class V>
V from_bytes(std::string_view bytes) {
  byte_reader in(std::span<const char>(bytes.data(), bytes.size()));
  return type_serializer<V>::read(in);
}

class scoped_state {
public:
  scoped_state(const current_key* key, std::uint32_t id) : key_(key), id_(id) {}

protected:
  state::keyed_state_backend& backend() const {
    if (key_ == nullptr || key_->backend == nullptr)
      throw std::logic_error("keyed state used outside of processElement");
    return *key_->backend;
  }
  const current_key& key() const { return *key_; }
  std::uint32_t id() const { return id_; }

private:
  const current_key* key_;
  std::uint32_t id_;
};

} // namespace keyed_state_detail

/// One value per key (Flink's ValueState).
template <class V>
class value_state : keyed_state_detail::scoped_state {
public:
  using scoped_state::scoped_state;
  /// The key's value; none before the first update.
  std::optional<V> value() const {
    std::string bytes;
    if (!backend().get(id(), key().key_group, key().view(), bytes))
      return std::nullopt;
    return keyed_state_detail::from_bytes<V>(bytes);
  }
  void update(const V& v) {
    auto bytes = keyed_state_detail::to_bytes(v);
    backend().put(id(), key().key_group, key().view(), {bytes.data(), bytes.size()});
  }
  void clear() { backend().remove(id(), key().key_group, key().view()); }
};

/// A list per key (Flink's ListState): the values one after another in one entry.
template <class V>
class list_state : keyed_state_detail::scoped_state {
public:
  using scoped_state::scoped_state;
  std::vector<V> get() const {
    std::vector<V> out;
    std::string bytes;
    if (!backend().get(id(), key().key_group, key().view(), bytes))
      return out;
    byte_reader in(std::span<const char>(bytes.data(), bytes.size()));
    while (!in.at_end())
      out.push_back(type_serializer<V>::read(in));
    return out;
  }
  void add(const V& v) {
    std::string bytes;
    backend().get(id(), key().key_group, key().view(), bytes);
    auto more = keyed_state_detail::to_bytes(v);
    bytes.append(more.data(), more.size());
    backend().put(id(), key().key_group, key().view(), bytes);
  }
  void update(const std::vector<V>& values) {
    std::vector<char> bytes;
    for (const auto& v : values)
      type_serializer<V>::write(v, bytes);
    backend().put(id(), key().key_group, key().view(), {bytes.data(), bytes.size()});
  }
  void clear() { backend().remove(id(), key().key_group, key().view()); }
};

/// A map per key (Flink's MapState): each entry under the key's bytes followed by the user key's
/// (the serialized key is prefix-free, so a key's entries are one prefix range).
template <class UK, class UV>
class map_state : keyed_state_detail::scoped_state {
public:
  using scoped_state::scoped_state;
  std::optional<UV> get(const UK& k) const {
    std::string bytes;
    auto full = entry_key(k);
    if (!backend().get(id(), key().key_group, {full.data(), full.size()}, bytes))
      return std::nullopt;
    return keyed_state_detail::from_bytes<UV>(bytes);
  }
  bool contains(const UK& k) const { return get(k).has_value(); }
  void put(const UK& k, const UV& v) {
    auto full = entry_key(k);
    auto bytes = keyed_state_detail::to_bytes(v);
    backend().put(id(), key().key_group, {full.data(), full.size()}, {bytes.data(), bytes.size()});
  }
  void remove(const UK& k) {
    auto full = entry_key(k);
    backend().remove(id(), key().key_group, {full.data(), full.size()});
  }
  /// The key's entries, in the order of their serialized user keys.
  std::vector<std::pair<UK, UV>> entries() const {
    std::vector<std::pair<UK, UV>> out;
    auto prefix = key().view();
    backend().for_each(id(), key().key_group, prefix, [&](std::string_view k, std::string_view v) {
      out.emplace_back(keyed_state_detail::from_bytes<UK>(k.substr(prefix.size())),
                       keyed_state_detail::from_bytes<UV>(v));
    });
    return out;
  }
  bool is_empty() const { return entries().empty(); }
  void clear() {
    std::vector<std::string> keys;
    backend().for_each(id(), key().key_group, key().view(),
                       [&](std::string_view k, std::string_view) { keys.emplace_back(k); });
    for (const auto& k : keys)
      backend().remove(id(), key().key_group, k);
  }

private:
  std::vector<char> entry_key(const UK& k) const {
    auto full = key().bytes;
    type_serializer<UK>::write(k, full);
    return full;
  }
};

/// Which clock a timer was on (Flink's TimeDomain).
enum class time_domain { event_time, processing_time };

/// Timers of the current key (Flink's TimerService): one per (key, time), deleted by the same
/// (key, time).
class timer_service {
public:
  timer_service(operator_timers* timers, const keyed_state_detail::current_key& key)
    : timers_(timers),
      key_(key) {}
  std::int64_t current_processing_time() const { return timers().current_processing_time(); }
  std::int64_t current_watermark() const { return timers().current_watermark(); }
  void register_event_time_timer(std::int64_t time) {
    timers().register_event_time_timer(key_.key_group, key_.view(), {}, time);
  }
  void delete_event_time_timer(std::int64_t time) {
    timers().delete_event_time_timer(key_.key_group, key_.view(), {}, time);
  }
  void register_processing_time_timer(std::int64_t time) {
    timers().register_processing_time_timer(key_.key_group, key_.view(), {}, time);
  }
  void delete_processing_time_timer(std::int64_t time) {
    timers().delete_processing_time_timer(key_.key_group, key_.view(), {}, time);
  }

private:
  operator_timers& timers() const {
    if (timers_ == nullptr)
      throw std::logic_error("timers used outside of processElement and onTimer");
    return *timers_;
  }
  operator_timers* timers_;
  const keyed_state_detail::current_key& key_;
};

/// What a keyed process function sees (Flink's RuntimeContext and KeyedProcessFunction.Context):
/// the current key, the subtask, and its keyed states by name.
template <class K>
class keyed_context {
public:
  keyed_context(const operator_context& ctx, keyed_state_detail::current_key& key,
                operator_timers* timers = nullptr)
    : subtask_(ctx.subtask_index),
      parallelism_(ctx.parallelism),
      key_(key),
      time_(ctx.time),
      timers_(timers, key),
      operator_(std::make_shared<operator_context>(ctx)) {}

  /// The key of the record being processed (or of the timer firing).
  const K& current_key() const { return *current_; }
  /// The event timestamp of the record being processed, or of the event-time timer firing;
  /// none for a record without one or a processing-time timer (Flink's Context#timestamp).
  std::optional<std::int64_t> timestamp() const {
    if (time_ == nullptr || !time_->has_timestamp)
      return std::nullopt;
    return time_->timestamp;
  }
  streaming::timer_service& timer_service() { return timers_; }
  /// Emits `value` to the side output `tag` (Flink's Context#output): the stream
  /// `get_side_output(tag)` of this operator gets it, with the current record's timestamp.
  template <class X>
  void output(const output_tag<X>& tag, const X& value) {
    auto it = side_outputs_.find(tag.id());
    if (it == side_outputs_.end()) {
      std::shared_ptr<streaming::output<X>> made = make_side_output<X>(*operator_, tag);
      it = side_outputs_.emplace(tag.id(), std::move(made)).first;
    }
    static_cast<streaming::output<X>*>(it->second.get())->collect_ref(value);
  }
  /// In `on_timer`: which clock fired (Flink's OnTimerContext#timeDomain).
  streaming::time_domain time_domain() const { return domain_; }
  void set_time_domain(streaming::time_domain d) { domain_ = d; }
  int subtask_index() const { return subtask_; }
  int parallelism() const { return parallelism_; }

  /// The state named `name` (the same name: the same state, also after a restore). Get them in
  /// open() and keep them.
  template <class V>
  value_state<V> get_state(const std::string& name) {
    return value_state<V>(&key_, register_state(name, "value"));
  }
  template <class V>
  list_state<V> get_list_state(const std::string& name) {
    return list_state<V>(&key_, register_state(name, "list"));
  }
  template <class UK, class UV>
  map_state<UK, UV> get_map_state(const std::string& name) {
    return map_state<UK, UV>(&key_, register_state(name, "map"));
  }

  void set_current_key(const K* key) { current_ = key; }

private:
  std::uint32_t register_state(const std::string& name, const char* kind) {
    if (key_.backend == nullptr)
      throw std::logic_error("keyed state before the operator opened");
    // The kind is part of the name: a value and a list of one name are different states.
    return key_.backend->register_state(std::string(kind) + ":" + name);
  }

  int subtask_;
  int parallelism_;
  keyed_state_detail::current_key& key_;
  const element_time* time_;
  streaming::timer_service timers_;
  /// What side outputs are built from, and those built (typed by their tag's record type).
  std::shared_ptr<const operator_context> operator_;
  std::map<std::string, std::shared_ptr<void>> side_outputs_;
  streaming::time_domain domain_ = streaming::time_domain::event_time;
  const K* current_ = nullptr;
};

/// The user's function (Flink's KeyedProcessFunction<K, I, O>): states in open(), records with
/// their key in process_element.
template <class K, class In, class Out>
class keyed_process_function {
public:
  virtual ~keyed_process_function() = default;
  virtual void open(keyed_context<K>& ctx) { (void)ctx; }
  virtual void process_element(const In& value, keyed_context<K>& ctx, output<Out>& out) = 0;
  /// A timer of `ctx.current_key()` registered for `timestamp` fired (ctx.time_domain() says
  /// which clock). Records emitted carry the timer's time for event time, none for processing
  /// time.
  virtual void on_timer(std::int64_t timestamp, keyed_context<K>& ctx, output<Out>& out) {
    (void)timestamp;
    (void)ctx;
    (void)out;
  }
};

/// What every keyed operator holds (Flink's AbstractStreamOperator keyed parts): its keyed state
/// backend, its timers in that backend, the current key and the context the user's function
/// sees. The operator sets the key of each record (`set_key`) and of each timer (the core does,
/// before calling the operator's handler), and forwards restore, open, snapshots and watermarks.
template <class K>
class keyed_operator_core {
public:
  /// (timer, clock) with the timer's key current and the timestamp slot set as Flink's
  /// TimestampedCollector does.
  using timer_handler = std::function<void(const timer&, time_domain)>;

  keyed_operator_core(const operator_context& ctx, std::string timer_name)
    : max_parallelism_(ctx.key_group_max_parallelism),
      range_(ctx.key_groups),
      backend_(ctx.state_backend, ctx.key_groups),
      timers_(backend_, std::move(timer_name), ctx.key_groups, ctx.processing_time),
      time_(ctx.time),
      context_(ctx, current_, &timers_) {
    timers_.set_handlers([this](const timer& t) { fire(t, time_domain::event_time); },
                         [this](const timer& t) { fire(t, time_domain::processing_time); });
  }
  keyed_operator_core(const keyed_operator_core&) = delete;
  keyed_operator_core& operator=(const keyed_operator_core&) = delete;

  void set_timer_handler(timer_handler handler) { handler_ = std::move(handler); }

  void restore(const state::operator_state_restore& restore) {
    if (!restore.has_keyed_state())
      return;
    if (auto restored = backend_.get().restore(restore.keyed_handles()); !restored)
      throw std::runtime_error(restored.error().message);
  }
  void open() {
    current_.backend = &backend_.get();
    timers_.open();
  }
  /// Makes `key` current for state and timers; a key outside this subtask's key groups means the
  /// record came through the wrong channel.
  void set_key(const K& key) {
    auto group = assign_to_key_group(key_hash(key), max_parallelism_);
    if (!range_.contains(group))
      throw std::logic_error("Key group " + std::to_string(group)
                             + " is not in this subtask's range: the record reached the wrong "
                               "subtask");
    current_.key_group = group;
    current_.bytes.clear();
    type_serializer<K>::write(key, current_.bytes);
    context_.set_current_key(&key);
  }
  void clear_key() { context_.set_current_key(nullptr); }

  void advance_watermark(std::int64_t watermark) { timers_.advance_watermark(watermark); }
  state::operator_snapshot snapshot(std::int64_t checkpoint_id) {
    state::operator_snapshot s;
    s.keyed_upload = backend_.get().snapshot(checkpoint_id);
    return s;
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) {
    backend_.notify_checkpoint_complete(checkpoint_id);
  }

  keyed_context<K>& context() { return context_; }
  operator_timers& timers() { return timers_; }
  state::keyed_state_backend& backend() { return backend_.get(); }
  const keyed_state_detail::current_key& current() const { return current_; }
  element_time* time() const { return time_; }

private:
  void fire(const timer& t, time_domain domain) {
    current_.key_group = t.key_group;
    current_.bytes.assign(t.key.begin(), t.key.end());
    K key = keyed_state_detail::from_bytes<K>(t.key);
    context_.set_current_key(&key);
    context_.set_time_domain(domain);
    if (time_ != nullptr) {
      // Flink's TimestampedCollector: an event-time timer's output carries its time.
      if (domain == time_domain::event_time)
        time_->set(t.timestamp);
      else
        time_->erase();
    }
    if (handler_)
      handler_(t, domain);
    context_.set_time_domain(time_domain::event_time);
    context_.set_current_key(nullptr);
  }

  int max_parallelism_;
  key_group_range range_;
  keyed_backend_holder backend_;
  operator_timers timers_;
  element_time* time_;
  keyed_state_detail::current_key current_;
  keyed_context<K> context_;
  timer_handler handler_;
};

template <class K, class In, class Out>
class keyed_process_operator final : public one_input_operator<In> {
public:
  keyed_process_operator(std::unique_ptr<keyed_process_function<K, In, Out>> fn,
                         std::function<K(const In&)> key, const operator_context& ctx,
                         std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      key_(std::move(key)),
      core_(ctx, "user-timers"),
      out_(std::move(out)) {
    core_.set_timer_handler(
      [this](const timer& t, time_domain) { fn_->on_timer(t.timestamp, core_.context(), *out_); });
  }

  void initialize_state(const state::operator_state_restore& restore) override {
    core_.restore(restore);
  }

  void open() override {
    core_.open();
    fn_->open(core_.context());
  }

  void process_watermark(std::int64_t watermark) override {
    core_.advance_watermark(watermark);
    this->emit_watermark(watermark);
  }

  void process_element(const In& value) override {
    K key = key_(value);
    core_.set_key(key);
    fn_->process_element(value, core_.context(), *out_);
    core_.clear_key();
  }

  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    return core_.snapshot(checkpoint_id);
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    core_.notify_checkpoint_complete(checkpoint_id);
  }

private:
  std::unique_ptr<keyed_process_function<K, In, Out>> fn_;
  std::function<K(const In&)> key_;
  keyed_operator_core<K> core_;
  output_ref<Out> out_;
};

} // namespace flint::streaming
