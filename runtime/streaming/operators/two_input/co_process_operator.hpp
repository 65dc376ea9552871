#pragma once
/// Flink's CoProcessOperator and KeyedCoProcessOperator: a user function over two inputs (what
/// `connect(...).process`, `.map` and `.flat_map` run). The keyed one gives both inputs the same
/// keyed state and timers, scoped to each record's key (both inputs are partitioned by key).

#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operators/two_input/two_input_operator.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace flint::streaming {

/// What a non-keyed two-input function sees (Flink's CoProcessFunction.Context).
class co_process_context {
public:
  explicit co_process_context(const operator_context& ctx)
    : time_(ctx.time),
      operator_(std::make_shared<operator_context>(ctx)) {}
  /// The event timestamp of the record being processed, if it has one.
  std::optional<std::int64_t> timestamp() const {
    if (time_ == nullptr || !time_->has_timestamp)
      return std::nullopt;
    return time_->timestamp;
  }
  /// The watermark both inputs have reached.
  std::int64_t current_watermark() const { return watermark_; }
  template <class X>
  void output(const output_tag<X>& tag, const X& value) {
    auto it = side_outputs_.find(tag.id());
    if (it == side_outputs_.end()) {
      std::shared_ptr<streaming::output<X>> made = make_side_output<X>(*operator_, tag);
      it = side_outputs_.emplace(tag.id(), std::move(made)).first;
    }
    static_cast<streaming::output<X>*>(it->second.get())->collect_ref(value);
  }
  void set_watermark(std::int64_t w) { watermark_ = w; }

private:
  const element_time* time_;
  std::int64_t watermark_ = min_watermark;
  std::shared_ptr<const operator_context> operator_;
  std::map<std::string, std::shared_ptr<void>> side_outputs_;
};

/// Flink's CoProcessFunction<IN1, IN2, OUT>.
template <class In1, class In2, class Out>
class co_process_function {
public:
  virtual ~co_process_function() = default;
  virtual void open(co_process_context& ctx) { (void)ctx; }
  virtual void process_element1(const In1& value, co_process_context& ctx, output<Out>& out) = 0;
  virtual void process_element2(const In2& value, co_process_context& ctx, output<Out>& out) = 0;
};

template <class In1, class In2, class Out>
class co_process_operator final : public two_input_operator<In1, In2> {
public:
  co_process_operator(std::unique_ptr<co_process_function<In1, In2, Out>> fn,
                      const operator_context& ctx, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      context_(ctx),
      out_(std::move(out)) {}
  void open() override { fn_->open(context_); }
  void process_element1(const In1& value) override { fn_->process_element1(value, context_, *out_); }
  void process_element2(const In2& value) override { fn_->process_element2(value, context_, *out_); }
  void process_watermark(std::int64_t watermark) override {
    context_.set_watermark(watermark);
    this->emit_watermark(watermark);
  }

private:
  std::unique_ptr<co_process_function<In1, In2, Out>> fn_;
  co_process_context context_;
  output_ref<Out> out_;
};

/// Flink's KeyedCoProcessFunction<K, IN1, IN2, OUT>: both inputs' records with their key's
/// state and timers.
template <class K, class In1, class In2, class Out>
class keyed_co_process_function {
public:
  virtual ~keyed_co_process_function() = default;
  virtual void open(keyed_context<K>& ctx) { (void)ctx; }
  virtual void process_element1(const In1& value, keyed_context<K>& ctx, output<Out>& out) = 0;
  virtual void process_element2(const In2& value, keyed_context<K>& ctx, output<Out>& out) = 0;
  virtual void on_timer(std::int64_t timestamp, keyed_context<K>& ctx, output<Out>& out) {
    (void)timestamp;
    (void)ctx;
    (void)out;
  }
};

template <class K, class In1, class In2, class Out>
class keyed_co_process_operator final : public two_input_operator<In1, In2> {
public:
  keyed_co_process_operator(std::unique_ptr<keyed_co_process_function<K, In1, In2, Out>> fn,
                            std::function<K(const In1&)> key1, std::function<K(const In2&)> key2,
                            const operator_context& ctx, std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      key1_(std::move(key1)),
      key2_(std::move(key2)),
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
  void process_element1(const In1& value) override {
    K key = key1_(value);
    core_.set_key(key);
    fn_->process_element1(value, core_.context(), *out_);
    core_.clear_key();
  }
  void process_element2(const In2& value) override {
    K key = key2_(value);
    core_.set_key(key);
    fn_->process_element2(value, core_.context(), *out_);
    core_.clear_key();
  }
  void process_watermark(std::int64_t watermark) override {
    core_.advance_watermark(watermark);
    this->emit_watermark(watermark);
  }
  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    return core_.snapshot(checkpoint_id);
  }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    core_.notify_checkpoint_complete(checkpoint_id);
  }

private:
  std::unique_ptr<keyed_co_process_function<K, In1, In2, Out>> fn_;
  std::function<K(const In1&)> key1_;
  std::function<K(const In2&)> key2_;
  keyed_operator_core<K> core_;
  output_ref<Out> out_;
};

} // namespace flint::streaming
