#pragma once
/// Flink's DataGeneratorSource as a source operator: a generator function turns an index into a
/// record, for the indices [0, count) — or without end, until the job is cancelled. The index
/// space is cut into `parallelism × splits_per_subtask` splits, split k taking k, k + n, k + 2n…
/// (n splits in all), so every subtask walks the same stretch of the index space at once and
/// generated event time advances alike on each. A subtask emits its splits round-robin, one
/// record at a time, optionally paced to a rate (records per second for this subtask), and
/// waits for the next record's turn on a processing-time timer instead of spinning.
///
/// The watermark strategy runs inside the source, per split (Flink's per-split watermarks): each
/// split has its own watermark generator, the subtask's watermark is the minimum over its splits
/// that are neither idle nor finished, and it goes idle when all of them are. Periodic generators
/// emit every `pipeline.auto-watermark-interval` on the task's processing-time service;
/// punctuated ones as they see records.
///
/// Its operator state is each split's next index (with its stride and end), so a restore at any
/// parallelism continues every split exactly where the checkpoint left it.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/operators/sources.hpp"
#include "runtime/streaming/time/watermark_generator.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

namespace flint::streaming {

/// What a data generator source is asked for.
struct data_generator_options {
  /// Indices [0, count); `unbounded_count`: no end.
  std::int64_t count = 0;
  /// Records per second of this subtask; 0: as fast as the task takes them.
  double records_per_second = 0;
  /// Splits each subtask starts with (each its own watermark generator).
  int splits_per_subtask = 1;
};

/// The count of a source that runs until cancelled (Flink passes Long.MAX_VALUE).
inline constexpr std::int64_t unbounded_count = std::numeric_limits<std::int64_t>::max();

template <class T>
class data_generator_source final : public source_operator {
public:
  using generator_fn = std::function<T(std::int64_t index)>;
  /// `assigner(record, Long.MIN_VALUE)`: the record's event timestamp; empty: records carry none.
  using assigner_fn = std::function<std::int64_t(const T&, std::int64_t)>;
  /// A watermark generator for one split.
  using watermark_generator_factory = std::function<std::unique_ptr<watermark_generator<T>>()>;

  data_generator_source(generator_fn generator, data_generator_options options,
                        assigner_fn assigner, watermark_generator_factory watermarks,
                        const operator_context& ctx, std::unique_ptr<output<T>> out)
    : generator_(std::move(generator)),
      rate_(options.records_per_second),
      assigner_(std::move(assigner)),
      make_watermarks_(std::move(watermarks)),
      time_(ctx.time),
      processing_time_(ctx.processing_time),
      interval_(ctx.auto_watermark_interval),
      wake_(ctx.wake),
      yield_(ctx.yield_signal_of()),
      out_(std::move(out)) {
    if (options.count < 0)
      throw std::invalid_argument("the count of a data generator source cannot be negative");
    if (options.splits_per_subtask < 1)
      throw std::invalid_argument("a data generator source needs one split per subtask at least");
    records_out_ = 0;
    auto per = static_cast<std::uint64_t>(options.splits_per_subtask);
    auto stride = static_cast<std::uint64_t>(ctx.parallelism) * per;
    for (std::uint64_t s = 0; s < per; ++s) {
      auto first = static_cast<std::uint64_t>(ctx.subtask_index) * per + s;
      splits_.push_back(make_split(first, stride, static_cast<std::uint64_t>(options.count)));
    }
  }

  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.present())
      return;
    splits_.clear();
    for (const auto& entry : restore.list_entries()) {
      auto p = decode_positions(entry, 3, "data generator source");
      splits_.push_back(make_split(p[0], p[1] == 0 ? 1 : p[1], p[2]));
    }
  }

  void open() override {
    remaining_ = splits_.size();
    for (auto& s : splits_) {
      s.watermarks = make_watermarks_ ? make_watermarks_() : nullptr;
      s.output = std::make_unique<split_output>(*this);
      if (s.next >= s.end) {
        s.done = true;
        --remaining_;
      }
    }
    if (processing_time_) {
      started_at_ = processing_time_->current_processing_time();
      if (interval_ > 0 && has_watermarks())
        schedule_periodic(started_at_ + interval_);
    }
  }

  source_status emit_next(std::size_t max_records) override {
    std::size_t n = 0;
    while (n < max_records) {
      if (remaining_ == 0)
        return finish_splits();
      if (rate_ > 0 && !allowed_now())
        return wait_for_turn();
      auto& s = splits_[current_];
      current_ = (current_ + 1) % splits_.size();
      if (s.next >= s.end) {
        finished(s);
        continue;
      }
      emit(s);
      ++n;
      if (yield_())
        break;
    }
    return source_status::more_available;
  }

  /// Each split's next index, stride and end; finished splits too, so that a restored subtask
  /// never starts one again.
  state::operator_snapshot snapshot_state(std::int64_t) override {
    state::operator_snapshot s;
    for (const auto& sp : splits_)
      s.list_entries.push_back(encode_positions({sp.next, sp.stride, sp.end}));
    return s;
  }

  void close() override { closed_ = true; }

  /// The splits this subtask holds (tests).
  std::size_t num_splits() const noexcept { return splits_.size(); }

private:
  /// Where a split's generator emits: remembered, then combined over the subtask's splits.
  class split_output final : public watermark_output {
  public:
    explicit split_output(data_generator_source& source) : source_(source) {}
    void emit_watermark(std::int64_t watermark) override {
      if (watermark > watermark_)
        watermark_ = watermark;
      idle_ = false;
      source_.update_combined();
    }
    void mark_idle() override {
      idle_ = true;
      source_.update_combined();
    }
    void mark_active() override {
      idle_ = false;
      source_.update_combined();
    }
    std::int64_t watermark_ = min_watermark;
    bool idle_ = false;

  private:
    data_generator_source& source_;
  };

  struct split {
    std::uint64_t next = 0;
    std::uint64_t stride = 1;
    std::uint64_t end = 0;
    std::unique_ptr<watermark_generator<T>> watermarks;
    std::unique_ptr<split_output> output;
    bool done = false;
  };

  static split make_split(std::uint64_t next, std::uint64_t stride, std::uint64_t end) {
    split s;
    s.next = next;
    s.stride = stride;
    s.end = end;
    return s;
  }

  bool has_watermarks() const { return static_cast<bool>(make_watermarks_); }

  void emit(split& s) {
    T record = generator_(static_cast<std::int64_t>(s.next));
    s.next = s.end - s.next > s.stride ? s.next + s.stride : s.end;
    std::int64_t ts = min_watermark;
    if (assigner_) {
      ts = assigner_(record, min_watermark);
      if (time_)
        time_->set(ts);
    } else if (time_) {
      time_->erase();
    }
    ++emitted_;
    ++records_out_;
    // The record before what it makes its generator emit (Flink's SourceOutputWithWatermarks).
    out_->collect_ref(record);
    if (s.watermarks)
      s.watermarks->on_event(record, ts, *s.output);
  }

  void finished(split& s) {
    if (s.done)
      return;
    s.done = true;
    --remaining_;
    update_combined();
  }

  source_status finish_splits() {
    ended_ = true;
    return source_status::end_of_input;
  }

  /// Whether the rate lets one more record out now (counted from open, so a burst after a
  /// stall is at most what the stall owed).
  bool allowed_now() const {
    if (!processing_time_)
      return true;
    auto elapsed = processing_time_->current_processing_time() - started_at_;
    return static_cast<double>(emitted_) < rate_ * static_cast<double>(elapsed) / 1000.0 + 1.0;
  }

  /// Nothing until the next record's turn: a processing-time timer wakes the task then.
  source_status wait_for_turn() {
    if (!wake_pending_ && processing_time_) {
      wake_pending_ = true;
      auto due = started_at_
        + static_cast<std::int64_t>(static_cast<double>(emitted_) * 1000.0 / rate_);
      due = std::max(due, processing_time_->current_processing_time() + 1);
      processing_time_->register_timer(due, [this](std::int64_t) {
        wake_pending_ = false;
        if (!closed_ && wake_)
          wake_();
      });
    }
    return source_status::nothing_available;
  }

  void schedule_periodic(std::int64_t at) {
    processing_time_->register_timer(at, [this](std::int64_t now) {
      if (closed_ || ended_)
        return;
      for (auto& s : splits_)
        if (!s.done && s.watermarks)
          s.watermarks->on_periodic_emit(*s.output);
      schedule_periodic(now + interval_);
    });
  }

  /// The subtask's watermark: the minimum over active, unfinished splits; idle when every
  /// unfinished split is idle.
  void update_combined() {
    if (ended_ || !has_watermarks())
      return;
    std::int64_t combined = max_watermark;
    bool any_active = false;
    for (const auto& s : splits_) {
      if (s.done || !s.output || s.output->idle_)
        continue;
      any_active = true;
      combined = std::min(combined, s.output->watermark_);
    }
    if (!any_active) {
      if (remaining_ > 0 && !idle_) {
        idle_ = true;
        emit_watermark_status(true);
      }
      return;
    }
    if (idle_) {
      idle_ = false;
      emit_watermark_status(false);
    }
    if (combined > min_watermark)
      emit_watermark(combined);
  }

  generator_fn generator_;
  double rate_;
  assigner_fn assigner_;
  watermark_generator_factory make_watermarks_;
  element_time* time_;
  processing_time_service* processing_time_;
  std::int64_t interval_;
  std::function<void()> wake_;
  yield_signal yield_;
  output_ref<T> out_;
  std::vector<split> splits_;
  std::size_t current_ = 0;
  std::size_t remaining_ = 0;
  std::int64_t started_at_ = 0;
  std::uint64_t emitted_ = 0;
  bool wake_pending_ = false;
  bool idle_ = false;
  bool ended_ = false;
  bool closed_ = false;
};

} // namespace flint::streaming
