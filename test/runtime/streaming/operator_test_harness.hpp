#pragma once
/// A task around one operator, for deterministic operator tests (Flink's
/// OneInputStreamOperatorTestHarness): records go in with or without timestamps, watermarks and
/// watermark status go in as the task would hand them over, processing time moves only when the
/// test says, and the outputs (values with their timestamps) and emitted watermarks are kept.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/element_time.hpp"
#include "runtime/streaming/time/processing_time_service.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace flint::streaming::test {

/// One emitted record with the timestamp it carried.
template <class T>
struct stamped {
  T value;
  std::optional<std::int64_t> timestamp;
  friend bool operator==(const stamped&, const stamped&) = default;
};

/// What the operator under test emitted, in order: records, watermarks and status changes.
template <class Out>
struct harness_output {
  std::vector<stamped<Out>> records;
  std::vector<std::int64_t> watermarks;
  std::vector<bool> statuses;
};

template <class In, class Out = In>
class operator_test_harness {
public:
  operator_test_harness()
    : processing_time_([this] { return now_; }) {
    ctx_.operator_name = "under test";
    ctx_.task_name = "harness";
    ctx_.time = &time_;
    ctx_.processing_time = &processing_time_;
    ctx_.auto_watermark_interval = 200;
    // One subtask of one: every key group is this harness's.
    ctx_.key_group_max_parallelism = 128;
    ctx_.key_groups = state::key_group_range_for_operator(128, 1, 0);
  }

  operator_context& context() { return ctx_; }
  /// The operator's output: build the operator with it.
  std::unique_ptr<streaming::output<Out>> make_output() {
    return std::make_unique<capturing_output>(*this);
  }
  /// Takes the operator (built over context() and make_output()) and opens it.
  void open(std::unique_ptr<one_input_operator<In>> op) {
    op_ = std::move(op);
    forwarder_ = std::make_unique<capturing_forwarder>(*this);
    op_->set_watermark_forwarder(forwarder_.get());
    op_->open();
  }
  one_input_operator<In>& op() { return *op_; }

  void process_element(const In& value, std::optional<std::int64_t> timestamp = std::nullopt) {
    time_.has_timestamp = timestamp.has_value();
    time_.timestamp = timestamp.value_or(0);
    op_->process_element(value);
  }
  void process_watermark(std::int64_t watermark) { op_->process_watermark(watermark); }
  void process_watermark_status(bool idle) { op_->process_watermark_status(idle); }
  /// Moves processing time to `time`, running the timers that came due.
  void set_processing_time(std::int64_t time) {
    now_ = time;
    processing_time_.fire_due(time);
  }
  std::int64_t processing_time() const { return now_; }
  /// Ends the input as the task does: the final watermark, then finish.
  void end_input() {
    op_->process_watermark(max_watermark);
    op_->finish();
  }
  void close() { op_->close(); }

  harness_output<Out>& emitted() { return out_; }
  /// The records emitted so far, taken (the next call sees only newer ones).
  std::vector<stamped<Out>> take_records() { return std::exchange(out_.records, {}); }

private:
  class capturing_output final : public streaming::output<Out> {
  public:
    explicit capturing_output(operator_test_harness& h) : h_(h) {}
    void collect(Out value) override {
      h_.out_.records.push_back(
        {std::move(value), h_.time_.has_timestamp ? std::optional(h_.time_.timestamp) : std::nullopt});
    }

  private:
    operator_test_harness& h_;
  };
  class capturing_forwarder final : public watermark_forwarder {
  public:
    explicit capturing_forwarder(operator_test_harness& h) : h_(h) {}
    void emit_watermark(std::int64_t w) override { h_.out_.watermarks.push_back(w); }
    void emit_watermark_status(bool idle) override { h_.out_.statuses.push_back(idle); }

  private:
    operator_test_harness& h_;
  };

  std::int64_t now_ = 0;
  element_time time_;
  queued_processing_time_service processing_time_;
  operator_context ctx_;
  std::unique_ptr<one_input_operator<In>> op_;
  std::unique_ptr<capturing_forwarder> forwarder_;
  harness_output<Out> out_;
};

} // namespace flint::streaming::test
