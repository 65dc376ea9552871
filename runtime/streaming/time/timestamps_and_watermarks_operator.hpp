#pragma once
/// Flink's TimestampsAndWatermarksOperator: gives each record its event timestamp (the
/// strategy's assigner, over the timestamp it came with) and runs the strategy's watermark
/// generator over them, emitting its watermarks every `pipeline.auto-watermark-interval` and
/// whenever a punctuated generator says so. Watermarks from upstream are swallowed (this operator
/// decides event time from here on), except the final one that ends the stream.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/watermark_generator.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace flint::streaming {

template <class T>
class timestamps_and_watermarks_operator final : public one_input_operator<T>,
                                                 private watermark_output {
public:
  /// `assigner(record, its timestamp or Long.MIN_VALUE)`.
  using assigner_fn = std::function<std::int64_t(const T&, std::int64_t)>;

  timestamps_and_watermarks_operator(assigner_fn assigner,
                                     std::unique_ptr<watermark_generator<T>> generator,
                                     const operator_context& ctx,
                                     std::unique_ptr<output<T>> out)
    : assigner_(std::move(assigner)),
      generator_(std::move(generator)),
      time_(ctx.time),
      processing_time_(ctx.processing_time),
      interval_(ctx.auto_watermark_interval),
      out_(std::move(out)) {}

  void open() override {
    if (interval_ > 0 && processing_time_)
      schedule_periodic(processing_time_->current_processing_time() + interval_);
  }

  void process_element(const T& value) override {
    std::int64_t previous = time_ && time_->has_timestamp ? time_->timestamp : min_watermark;
    std::int64_t ts = assigner_ ? assigner_(value, previous) : previous;
    if (time_)
      time_->set(ts);
    generator_->on_event(value, ts, *this);
    if (idle_)
      mark_active();
    out_->collect_ref(value);
  }

  void process_watermark(std::int64_t watermark) override {
    // Only the end of the stream passes: the generator decides event time below this operator.
    if (watermark == max_watermark) {
      ended_ = true;
      stream_operator::emit_watermark(watermark);
    }
  }
  void process_watermark_status(bool) override {}

  void close() override { closed_ = true; }

private:
  void schedule_periodic(std::int64_t at) {
    processing_time_->register_timer(at, [this](std::int64_t now) {
      if (closed_ || ended_)
        return;
      generator_->on_periodic_emit(*this);
      schedule_periodic(now + interval_);
    });
  }

  // watermark_output
  void emit_watermark(std::int64_t watermark) override {
    if (ended_)
      return;
    if (idle_)
      mark_active();
    stream_operator::emit_watermark(watermark);
  }
  void mark_idle() override {
    if (idle_ || ended_)
      return;
    idle_ = true;
    this->emit_watermark_status(true);
  }
  void mark_active() override {
    if (!idle_)
      return;
    idle_ = false;
    this->emit_watermark_status(false);
  }

  assigner_fn assigner_;
  std::unique_ptr<watermark_generator<T>> generator_;
  element_time* time_;
  processing_time_service* processing_time_;
  std::int64_t interval_;
  output_ref<T> out_;
  bool idle_ = false;
  bool ended_ = false;
  bool closed_ = false;
};

} // namespace flint::streaming
