#pragma once
/// The local phase of a two-phase window aggregate (Flink SQL's LocalWindowAggregate with
/// slicing): chained to the operator in front of a keyed event-time window's exchange, it folds
/// each record into the accumulator of its (key, slice) and sends one partial accumulator
/// (key, state) per key and slice across the exchange instead of every record. The window
/// operator behind the exchange (with global_window_contents) merges the partials of each window.
/// The API inserts it (api/windowed_stream.hpp, `pipeline.window.agg-phase-strategy`) for
/// tumbling and sliding event-time windows with their default trigger, no evictor and no late
/// side output, and a reduce or aggregate function.
///
/// Slices. A tumbling window of `size` with `offset` has slices of `size`; a sliding one of
/// (`size`, `slide`, `offset`) slices of g = gcd(size, slide), all aligned to the offset: slice
/// [s, s + g) with s = offset (mod g). Every window [a, a + size) has a = offset (mod slide),
/// so a = offset (mod g) and a + size = offset (mod g) too: no window boundary lies strictly
/// inside a slice, so each window either contains a whole slice or none of it. Hence the windows
/// containing a record's timestamp t are exactly the windows containing t's slice, and exactly
/// the windows containing the slice's max timestamp s + g - 1. A partial carries that timestamp,
/// so the window operator's assigner puts it in the same windows as each of its records.
///
/// Event time. A record whose slice ended at or before the watermark this operator last saw
/// (the slice's max timestamp <= it) goes on at once as a partial of its own, at its place in
/// the stream; so the window operator sees it as late exactly when it would have seen the record
/// as late (same windows, same position behind the same watermarks: the record is dropped and
/// counted in numLateRecordsDropped, or fires within the allowed lateness, as with one phase).
/// Every other record waits in its slice's table; at a watermark w the partials of every slice
/// whose max timestamp <= w are emitted before w is forwarded, so they arrive before the
/// watermark that makes their windows fire and are never late. A slice is also emitted early:
/// all of them when the tables hold more than `max_entries` accumulators (bounded memory), at
/// each checkpoint's prepare_snapshot_pre_barrier (so the operator has no state and a restore
/// replays exactly what came after the barrier) and when the input ends.

#include "runtime/streaming/keyed_state.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/element_time.hpp"
#include "runtime/streaming/type_serializer.hpp"
#include "runtime/streaming/windowing/assigner_checks.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_assigner.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

namespace flint::streaming {

/// The slices of an event-time tumbling or sliding assigner (see above).
struct window_slicing {
  /// g: the slice length (ms).
  std::int64_t slice = 0;
  /// Slices start at offset (mod slice).
  std::int64_t offset = 0;

  /// The slicing of `assigner`, or none when it is not an event-time tumbling or sliding one.
  static std::optional<window_slicing> of(const window_assigner<time_window>& assigner) {
    if (const auto* t = dynamic_cast<const tumbling_event_time_windows*>(&assigner))
      return window_slicing{t->size(), t->offset()};
    // Windows with gaps (size < slide): a record in a gap belongs to no window, and judged by
    // its slice's end it could be late where it is not, or the reverse; those stay one phase.
    if (const auto* s = dynamic_cast<const sliding_event_time_windows*>(&assigner))
      return s->size() < s->slide()
        ? std::nullopt
        : std::optional(window_slicing{std::gcd(s->size(), s->slide()), s->offset()});
    return std::nullopt;
  }

  /// The slice holding `timestamp`, bounded as the assigners' windows (the last one ends at
  /// INT64_MAX, the first one starts at INT64_MIN: time_window::for_each_holding).
  time_window slice_of(std::int64_t timestamp) const {
    return time_window::aligned(timestamp, slice, offset);
  }
  /// The max timestamp (end - 1) of the slice holding `timestamp`.
  std::int64_t slice_max_timestamp(std::int64_t timestamp) const {
    return slice_of(timestamp).max_timestamp();
  }
};

/// `Contents` is the window's contents policy (reducing_contents, aggregating_contents): its
/// `create`, `add_to` and `state_type` build the partial accumulators.
template <class K, class Contents>
class local_window_aggregate_operator final
  : public one_input_operator<typename Contents::element_type> {
public:
  using In = typename Contents::element_type;
  using state_type = typename Contents::state_type;
  /// What goes across the exchange: the key and the accumulator of one slice's records.
  using partial_type = std::pair<K, state_type>;

  /// Accumulators held at most (over all open slices) before all are emitted.
  static constexpr std::size_t default_max_entries = std::size_t{1} << 17;

  local_window_aggregate_operator(window_slicing slicing, Contents contents,
                                  std::function<K(const In&)> key, const operator_context& ctx,
                                  std::unique_ptr<output<partial_type>> out,
                                  std::size_t max_entries = default_max_entries)
    : slicing_(slicing),
      contents_(std::move(contents)),
      key_(std::move(key)),
      time_(ctx.time),
      max_entries_(max_entries < 1 ? 1 : max_entries),
      out_(std::move(out)) {}

  void process_element(const In& value) override {
    const auto timestamp =
      time_ != nullptr && time_->has_timestamp ? time_->timestamp : no_timestamp;
    check_has_timestamp(timestamp);
    // Consecutive records mostly share a slice: no division for them.
    if (timestamp < slice_start_ || timestamp > slice_max_) {
      auto slice = slicing_.slice_of(timestamp);
      slice_max_ = slice.max_timestamp();
      slice_start_ = slice.start;
    }
    const auto max_timestamp = slice_max_;
    K key = key_(value);
    if (max_timestamp <= watermark_) {
      // Late here: on at once, where the record itself would have gone.
      emit_one(partial_type{std::move(key), contents_.create(value)}, max_timestamp);
      return;
    }
    auto& table = table_of(max_timestamp);
    const auto hash = key_hash(key);
    if (auto* e = table.find(hash, [&](const partial_type& p) { return same_key(p.first, key); })) {
      contents_.add_to(e->second, value);
      return;
    }
    table.insert(hash, 0, partial_type{std::move(key), contents_.create(value)});
    if (++entries_ > max_entries_)
      flush_all();
  }

  void process_watermark(std::int64_t watermark) override {
    if (watermark > watermark_)
      watermark_ = watermark;
    // Every slice the watermark passed, before the watermark.
    while (!slices_.empty() && slices_.begin()->first <= watermark)
      flush_first();
    this->emit_watermark(watermark);
  }

  /// An input going idle leaves the window operator's watermark minimum: that watermark may
  /// then pass slices held here, so everything held goes first (as one phase would have sent
  /// the records themselves already).
  void process_watermark_status(bool idle) override {
    if (idle)
      flush_all();
    this->emit_watermark_status(idle);
  }

  void prepare_snapshot_pre_barrier(std::int64_t) override { flush_all(); }

  void finish() override { flush_all(); }

  /// Accumulators held (for tests).
  std::size_t buffered() const noexcept { return entries_; }

private:
  using table_type = keyed_value_table<partial_type>;

  table_type& table_of(std::int64_t max_timestamp) {
    if (last_ != nullptr && last_max_timestamp_ == max_timestamp)
      return *last_;
    last_ = &slices_[max_timestamp];
    last_max_timestamp_ = max_timestamp;
    return *last_;
  }

  void emit_one(const partial_type& partial, std::int64_t timestamp) {
    stamped scope(time_, timestamp);
    out_->collect_ref(partial);
  }

  /// Emits the earliest slice's partials and drops its table.
  void flush_first() {
    auto it = slices_.begin();
    {
      stamped scope(time_, it->first);
      it->second.for_each([&](int, const partial_type& partial) { out_->collect_ref(partial); });
    }
    entries_ -= it->second.size();
    if (last_ == &it->second)
      last_ = nullptr;
    slices_.erase(it);
  }

  void flush_all() {
    while (!slices_.empty())
      flush_first();
  }

  /// Output timestamp `timestamp` while in scope; the record's own afterwards (an operator in
  /// front may emit more records for the same input).
  class stamped {
  public:
    stamped(element_time* time, std::int64_t timestamp) : time_(time) {
      if (time_ != nullptr) {
        saved_ = *time_;
        time_->set(timestamp);
      }
    }
    ~stamped() {
      if (time_ != nullptr)
        *time_ = saved_;
    }
    stamped(const stamped&) = delete;
    stamped& operator=(const stamped&) = delete;

  private:
    element_time* time_;
    element_time saved_;
  };

  window_slicing slicing_;
  Contents contents_;
  std::function<K(const In&)> key_;
  element_time* time_;
  std::size_t max_entries_;
  output_ref<partial_type> out_;
  /// The open slices by max timestamp, each a table of its keys' accumulators.
  std::map<std::int64_t, table_type> slices_;
  /// The table of the slice the last record went to (consecutive records mostly share one).
  table_type* last_ = nullptr;
  std::int64_t last_max_timestamp_ = 0;
  std::size_t entries_ = 0;
  std::int64_t watermark_ = min_watermark;
  /// The last record's slice [slice_start_, slice_max_] (empty at first).
  std::int64_t slice_start_ = 1;
  std::int64_t slice_max_ = 0;
};

} // namespace flint::streaming
