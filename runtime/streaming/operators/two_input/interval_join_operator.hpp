#pragma once
/// Flink's IntervalJoinOperator: joins each left record at time t with every right record of the
/// same key in [t + lower, t + upper] (and symmetrically), in event time. Both sides wait in
/// keyed state, bucketed by timestamp, until the watermark passes the last time they can still
/// join (a cleanup timer per bucket); a record older than the watermark is late: dropped, or sent
/// to that side's late-data output. The joined record carries the larger of the two timestamps.

#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/operators/two_input/two_input_operator.hpp"
#include "runtime/streaming/time/ordered_bytes.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming {

/// What a join function sees (Flink's ProcessJoinFunction.Context).
class interval_join_context {
public:
  explicit interval_join_context(const operator_context& ctx)
    : operator_(std::make_shared<operator_context>(ctx)) {}
  std::int64_t left_timestamp() const { return left_; }
  std::int64_t right_timestamp() const { return right_; }
  /// The joined record's timestamp: the larger of the two.
  std::int64_t timestamp() const { return std::max(left_, right_); }
  template <class X>
  void output(const output_tag<X>& tag, const X& value) {
    auto it = side_outputs_.find(tag.id());
    if (it == side_outputs_.end()) {
      std::shared_ptr<streaming::output<X>> made = make_side_output<X>(*operator_, tag);
      it = side_outputs_.emplace(tag.id(), std::move(made)).first;
    }
    static_cast<streaming::output<X>*>(it->second.get())->collect_ref(value);
  }
  void set(std::int64_t left, std::int64_t right) {
    left_ = left;
    right_ = right;
  }

private:
  std::int64_t left_ = 0;
  std::int64_t right_ = 0;
  std::shared_ptr<const operator_context> operator_;
  std::map<std::string, std::shared_ptr<void>> side_outputs_;
};

/// Flink's ProcessJoinFunction<IN1, IN2, OUT>.
template <class L, class R, class Out>
class process_join_function {
public:
  virtual ~process_join_function() = default;
  virtual void process_element(const L& left, const R& right, interval_join_context& ctx,
                               output<Out>& out) = 0;
};

/// The bounds after `lower_bound_exclusive` / `upper_bound_exclusive` moved them in by one.
struct interval_join_bounds {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  /// Side outputs of late left and right records (empty: dropped).
  std::string left_late_tag;
  std::string right_late_tag;
};

template <class K, class L, class R, class Out>
class interval_join_operator final : public two_input_operator<L, R> {
public:
  interval_join_operator(std::unique_ptr<process_join_function<L, R, Out>> fn,
                         std::function<K(const L&)> left_key, std::function<K(const R&)> right_key,
                         interval_join_bounds bounds, const operator_context& ctx,
                         std::unique_ptr<output<Out>> out)
    : fn_(std::move(fn)),
      left_key_(std::move(left_key)),
      right_key_(std::move(right_key)),
      bounds_(std::move(bounds)),
      core_(ctx, "interval-join-timers"),
      join_context_(ctx),
      out_(std::move(out)) {
    if (bounds_.lower > bounds_.upper)
      throw std::invalid_argument(
        "lowerBound <= upperBound must be fulfilled (the interval join's bounds are "
        + std::to_string(bounds_.lower) + " and " + std::to_string(bounds_.upper) + ")");
    if (!bounds_.left_late_tag.empty())
      left_late_.emplace(make_output<L>(ctx, bounds_.left_late_tag));
    if (!bounds_.right_late_tag.empty())
      right_late_.emplace(make_output<R>(ctx, bounds_.right_late_tag));
    core_.set_timer_handler([this](const timer& t, time_domain) { clean_up(t); });
  }

  void initialize_state(const state::operator_state_restore& restore) override {
    core_.restore(restore);
  }
  void open() override {
    core_.open();
    auto& backend = core_.backend();
    left_state_ = backend.register_state("interval-join:left");
    right_state_ = backend.register_state("interval-join:right");
  }
  void process_element1(const L& value) override {
    process<true>(value, left_key_(value), left_state_, right_state_, bounds_.lower,
                  bounds_.upper);
  }
  void process_element2(const R& value) override {
    process<false>(value, right_key_(value), right_state_, left_state_, -bounds_.upper,
                   -bounds_.lower);
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
  std::int64_t late_records_dropped() const noexcept override { return late_; }

private:
  static constexpr std::string_view left_ns = "l";
  static constexpr std::string_view right_ns = "r";

  template <bool Left, class T>
  void process(const T& value, const K& key, std::uint32_t ours, std::uint32_t others,
               std::int64_t lower, std::int64_t upper) {
    auto* time = core_.time();
    if (time == nullptr || !time->has_timestamp)
      throw std::runtime_error(
        "Long.MIN_VALUE timestamp: Elements used in interval stream joins need to have "
        "timestamps meaningful timestamps.");
    const std::int64_t ts = time->timestamp;
    const std::int64_t watermark = core_.timers().current_watermark();
    if (watermark != min_watermark && ts < watermark) {
      ++late_;
      if constexpr (Left) {
        if (left_late_)
          (*left_late_)->collect_ref(value);
      } else {
        if (right_late_)
          (*right_late_)->collect_ref(value);
      }
      return;
    }
    core_.set_key(key);
    const auto& current = core_.current();
    auto& backend = core_.backend();
    // Into our bucket of this timestamp.
    std::string bucket(current.view());
    append_ordered_int64(bucket, ts);
    std::string entries;
    backend.get(ours, current.key_group, bucket, entries);
    std::vector<char> bytes;
    type_serializer<T>::write(value, bytes);
    entries.append(bytes.data(), bytes.size());
    backend.put(ours, current.key_group, bucket, entries);
    // Every bucket of the other side within the bounds (the key's buckets in time order).
    using other_type = std::conditional_t<Left, R, L>;
    const std::size_t prefix = current.bytes.size();
    std::vector<std::pair<std::int64_t, std::string>> matches;
    backend.for_each(others, current.key_group, current.view(),
                     [&](std::string_view k, std::string_view v) {
                       if (k.size() != prefix + 8)
                         return;
                       auto other_ts = read_ordered_int64(k, prefix);
                       if (other_ts >= ts + lower && other_ts <= ts + upper)
                         matches.emplace_back(other_ts, std::string(v));
                     });
    for (const auto& [other_ts, list] : matches) {
      byte_reader in(std::span<const char>(list.data(), list.size()));
      while (!in.at_end()) {
        auto other = type_serializer<other_type>::read(in);
        if constexpr (Left)
          emit(value, other, ts, other_ts);
        else
          emit(other, value, other_ts, ts);
      }
    }
    // The bucket can join nothing once the watermark passes ts + upper.
    const std::int64_t cleanup = upper > 0 ? ts + upper : ts;
    core_.timers().register_event_time_timer(current.key_group, current.view(),
                                             Left ? left_ns : right_ns, cleanup);
    core_.clear_key();
    // Later operators see the input's timestamp again (emit set the joined one).
    time->set(ts);
  }

  void emit(const L& left, const R& right, std::int64_t left_ts, std::int64_t right_ts) {
    join_context_.set(left_ts, right_ts);
    if (auto* time = core_.time())
      time->set(std::max(left_ts, right_ts));
    fn_->process_element(left, right, join_context_, *out_);
  }

  void clean_up(const timer& t) {
    const auto& current = core_.current();
    std::string bucket(current.view());
    if (t.ns == left_ns) {
      append_ordered_int64(bucket, bounds_.upper <= 0 ? t.timestamp : t.timestamp - bounds_.upper);
      core_.backend().remove(left_state_, current.key_group, bucket);
    } else {
      append_ordered_int64(bucket, bounds_.lower <= 0 ? t.timestamp + bounds_.lower : t.timestamp);
      core_.backend().remove(right_state_, current.key_group, bucket);
    }
  }

  std::unique_ptr<process_join_function<L, R, Out>> fn_;
  std::function<K(const L&)> left_key_;
  std::function<K(const R&)> right_key_;
  interval_join_bounds bounds_;
  keyed_operator_core<K> core_;
  interval_join_context join_context_;
  output_ref<Out> out_;
  std::optional<output_ref<L>> left_late_;
  std::optional<output_ref<R>> right_late_;
  std::uint32_t left_state_ = 0;
  std::uint32_t right_state_ = 0;
  std::int64_t late_ = 0;
};

} // namespace flint::streaming
