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

#include "runtime/streaming/operators/two_input/two_input_operator.hpp"

namespace flint::streaming::test {

/// The harness of a two-input operator (Flink's TwoInputStreamOperatorTestHarness): records of
/// either input with their timestamps, the combined watermark as the task would hand it over.
template <class In1, class In2, class Out>
class two_input_test_harness {
public:
  two_input_test_harness() : processing_time_([this] { return now_; }) {
    ctx_.operator_name = "under test";
    ctx_.task_name = "harness";
    ctx_.time = &time_;
    ctx_.processing_time = &processing_time_;
    ctx_.key_group_max_parallelism = 128;
    ctx_.key_groups = state::key_group_range_for_operator(128, 1, 0);
  }
  operator_context& context() { return ctx_; }
  std::unique_ptr<streaming::output<Out>> make_output() {
    return std::make_unique<capturing_output<Out>>(*this, out_.records);
  }
  /// A side output of `tag`, captured into `into`.
  template <class X>
  void capture_side_output(const std::string& tag, std::vector<stamped<X>>& into) {
    side_sinks_.push_back(std::make_unique<side_sink<X>>(*this, into));
    ctx_.chained_targets.push_back(side_sinks_.back().get());
    ctx_.chained_target_tags.push_back(tag);
  }
  void open(std::unique_ptr<two_input_operator<In1, In2>> op) {
    op_ = std::move(op);
    forwarder_ = std::make_unique<capturing_forwarder>(*this);
    op_->set_watermark_forwarder(forwarder_.get());
    op_->open();
  }
  void process_element1(const In1& v, std::optional<std::int64_t> ts = std::nullopt) {
    stamp(ts);
    op_->process_element1(v);
  }
  void process_element2(const In2& v, std::optional<std::int64_t> ts = std::nullopt) {
    stamp(ts);
    op_->process_element2(v);
  }
  void process_watermark(std::int64_t w) { op_->process_watermark(w); }
  void set_processing_time(std::int64_t time) {
    now_ = time;
    processing_time_.fire_due(time);
  }
  harness_output<Out>& emitted() { return out_; }
  std::vector<stamped<Out>> take_records() { return std::exchange(out_.records, {}); }
  two_input_operator<In1, In2>& op() { return *op_; }

private:
  void stamp(std::optional<std::int64_t> ts) {
    time_.has_timestamp = ts.has_value();
    time_.timestamp = ts.value_or(0);
  }
  template <class X>
  class capturing_output final : public streaming::output<X> {
  public:
    capturing_output(two_input_test_harness& h, std::vector<stamped<X>>& into) : h_(h), into_(into) {}
    void collect(X value) override {
      into_.push_back({std::move(value), h_.time_.has_timestamp ? std::optional(h_.time_.timestamp)
                                                                : std::nullopt});
    }

  private:
    two_input_test_harness& h_;
    std::vector<stamped<X>>& into_;
  };
  /// A chained "operator" that keeps what a side output sends it.
  template <class X>
  class side_sink final : public one_input_operator<X> {
  public:
    side_sink(two_input_test_harness& h, std::vector<stamped<X>>& into) : h_(h), into_(into) {}
    void process_element(const X& value) override {
      into_.push_back({value, h_.time_.has_timestamp ? std::optional(h_.time_.timestamp)
                                                     : std::nullopt});
    }

  private:
    two_input_test_harness& h_;
    std::vector<stamped<X>>& into_;
  };
  class capturing_forwarder final : public watermark_forwarder {
  public:
    explicit capturing_forwarder(two_input_test_harness& h) : h_(h) {}
    void emit_watermark(std::int64_t w) override { h_.out_.watermarks.push_back(w); }
    void emit_watermark_status(bool idle) override { h_.out_.statuses.push_back(idle); }

  private:
    two_input_test_harness& h_;
  };

  std::int64_t now_ = 0;
  element_time time_;
  queued_processing_time_service processing_time_;
  operator_context ctx_;
  std::vector<std::unique_ptr<stream_operator>> side_sinks_;
  std::unique_ptr<two_input_operator<In1, In2>> op_;
  std::unique_ptr<capturing_forwarder> forwarder_;
  harness_output<Out> out_;
};

} // namespace flint::streaming::test
