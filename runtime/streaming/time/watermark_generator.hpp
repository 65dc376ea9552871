#pragma once
/// Flink's WatermarkGenerator and its built-ins: a generator sees each record's timestamp
/// (`on_event`) and, every `pipeline.auto-watermark-interval`, gets the chance to emit
/// (`on_periodic_emit`); a punctuated one emits from `on_event`. Idleness wraps any of them
/// (Flink's WatermarksWithIdleness): no record for the idle timeout marks the output idle, so a
/// quiet split or subtask stops holding back the watermark downstream.

#include "runtime/streaming/time/element_time.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace flint::streaming {

/// Where a generator emits (Flink's WatermarkOutput).
class watermark_output {
public:
  virtual ~watermark_output() = default;
  virtual void emit_watermark(std::int64_t watermark) = 0;
  /// No records for a while: downstream ignores this output until it is active again.
  virtual void mark_idle() = 0;
  virtual void mark_active() = 0;
};

template <class T>
class watermark_generator {
public:
  virtual ~watermark_generator() = default;
  virtual void on_event(const T& event, std::int64_t event_timestamp, watermark_output& out) = 0;
  virtual void on_periodic_emit(watermark_output& out) = 0;
};

/// Flink's BoundedOutOfOrdernessWatermarks: the highest timestamp seen minus the bound, minus 1
/// (a record at exactly the watermark would be late).
template <class T>
class bounded_out_of_orderness_watermarks final : public watermark_generator<T> {
public:
  explicit bounded_out_of_orderness_watermarks(std::int64_t max_out_of_orderness_ms)
    : out_of_orderness_(max_out_of_orderness_ms),
      max_timestamp_(min_watermark + out_of_orderness_ + 1) {}
  void on_event(const T&, std::int64_t ts, watermark_output&) override {
    max_timestamp_ = std::max(max_timestamp_, ts);
  }
  void on_periodic_emit(watermark_output& out) override {
    out.emit_watermark(max_timestamp_ - out_of_orderness_ - 1);
  }

private:
  std::int64_t out_of_orderness_;
  std::int64_t max_timestamp_;
};

/// Flink's NoWatermarksGenerator.
template <class T>
class no_watermarks_generator final : public watermark_generator<T> {
public:
  void on_event(const T&, std::int64_t, watermark_output&) override {}
  void on_periodic_emit(watermark_output&) override {}
};

/// Flink's WatermarksWithIdleness: after `idle_timeout_ms` of processing time without a record
/// the output goes idle; the next record makes it active again.
template <class T>
class watermarks_with_idleness final : public watermark_generator<T> {
public:
  using clock_fn = std::function<std::int64_t()>;
  watermarks_with_idleness(std::unique_ptr<watermark_generator<T>> inner,
                           std::int64_t idle_timeout_ms, clock_fn clock)
    : inner_(std::move(inner)),
      timeout_(idle_timeout_ms),
      clock_(std::move(clock)) {}
  void on_event(const T& event, std::int64_t ts, watermark_output& out) override {
    inner_->on_event(event, ts, out);
    ++counter_;
    if (idle_) {
      idle_ = false;
      out.mark_active();
    }
  }
  void on_periodic_emit(watermark_output& out) override {
    auto now = clock_();
    if (counter_ != last_counter_) {
      last_counter_ = counter_;
      since_ = now;
    } else if (!since_) {
      since_ = now;
    }
    if (now - *since_ >= timeout_) {
      if (!idle_) {
        idle_ = true;
        out.mark_idle();
      }
      return;
    }
    inner_->on_periodic_emit(out);
  }

private:
  std::unique_ptr<watermark_generator<T>> inner_;
  std::int64_t timeout_;
  clock_fn clock_;
  std::uint64_t counter_ = 0;
  std::uint64_t last_counter_ = 0;
  std::optional<std::int64_t> since_;
  bool idle_ = false;
};

} // namespace flint::streaming
