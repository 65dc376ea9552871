#pragma once
/// Flink SQL's slice-shared window aggregate (SlicingWindowOperator with its
/// SliceSharedWindowAggProcessor, and the unshared one for tumbling windows) as the global phase
/// of the DataStream API's two-phase keyed window aggregate: the API puts it behind the
/// LocalWindowAggregate (local_window_aggregate_operator.hpp) exactly where that applies — an
/// event-time tumbling or sliding assigner (size >= slide), its default trigger, no evictor, no
/// late side output, a reduce or aggregate function — in place of the WindowOperator with
/// global_window_contents, under the same name and operator id.
///
/// One accumulator per (key, slice) instead of one per (key, window): a sliding window of
/// (size, slide) is size / g slices of g = gcd(size, slide) (window_slicing), so a partial costs
/// one probe into its slice's table instead of size / slide probes and as many timers. No timer
/// per key: the window ends to fire are a small ordered set filled when a slice first opens, and
/// a watermark fires each due window end for all its keys in one batch (the slices' tables merged
/// with `Local::merge_states`, in slice order). A slice goes once the last window holding it has
/// been cleaned up (its max timestamp + allowed lateness passed).
///
/// Semantics are the WindowOperator's with EventTimeTrigger (window_operator.hpp): an element is
/// late for a window whose cleanup time (max timestamp + allowed lateness) the watermark reached;
/// late for all of its windows it is dropped and counted (numLateRecordsDropped); a window whose
/// max timestamp the watermark passed but that is not cleaned up fires again at once for the
/// element's key (a late firing, with the whole window). The window function sees the same
/// result, the same window, output timestamp = window.max_timestamp(), per-window state removed
/// at the window's cleanup, and the same process-context clocks.
///
/// State. Between snapshots the slices live typed on the heap (with either backend); a snapshot
/// writes each (key, slice) accumulator into "window-slice-contents" under key bytes + the
/// slice's time_window bytes (Local's encoding, as the WindowOperator's "window-contents"), so
/// restore and rescaling by key group come from the backend, and a slice's entries are removed
/// from the backend when it expires. With the hashmap backend a snapshot's synchronous part only
/// shares the slices' tables with the upload, which serializes them (copy on write per slice: the
/// first change to a table the upload still holds copies it). Which windows already fired is the
/// watermark: each key group
/// holding slices records the watermark of its last snapshot in "window-slice-fired", so after a
/// restore (at any parallelism) a window whose max timestamp is at or below its key group's
/// recorded watermark does not fire again for that key group's keys — as the WindowOperator,
/// whose fired windows have no timer left; an element arriving for such a window before the
/// watermark passes it again gets a timer of its own (EventTimeTrigger registers one again).
///
/// Windows of their own. Some (key, window) pairs keep a whole-window accumulator, as the
/// WindowOperator does, in "window-contents" with per-key timers in "window-timers" (the
/// WindowOperator's names and bytes): the windows of a restored WindowOperator's savepoint
/// (taken over as they are: its fire and cleanup timers come with them, and whatever comes after
/// the restore goes into slices as well, for the other windows), and windows cleaned up before a
/// restore that an element re-creates afterwards (the WindowOperator re-creates them with only
/// the new elements, while the slices still hold older ones of the window's later slices). A
/// batch firing skips the keys that have their own accumulator of the window; they fire by their
/// timers. A savepoint of this operator holds slices a WindowOperator cannot split into windows:
/// the WindowOperator refuses it (window_operator.hpp).

#include "runtime/state/backend_entry_format.hpp"
#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/keyed_process_operator.hpp"
#include "runtime/streaming/keyed_state.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/time/operator_timers.hpp"
#include "runtime/streaming/time/ordered_bytes.hpp"
#include "runtime/streaming/windowing/local_window_aggregate_operator.hpp"
#include "runtime/streaming/windowing/sliding_windows.hpp"
#include "runtime/streaming/windowing/time_window.hpp"
#include "runtime/streaming/windowing/tumbling_windows.hpp"
#include "runtime/streaming/windowing/window_functions.hpp"
#include "runtime/streaming/windowing/window_lateness.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace flint::streaming {

/// The windows of an event-time tumbling or sliding assigner and their slices.
struct sliced_windows {
  std::int64_t size = 0;
  std::int64_t slide = 0;
  std::int64_t offset = 0;
  /// g = gcd(size, slide): slices [s, s + g) with s = offset (mod g).
  std::int64_t slice = 0;

  /// None unless `assigner` is an event-time tumbling or sliding one with size >= slide (where
  /// window_slicing applies).
  static std::optional<sliced_windows> of(const window_assigner<time_window>& assigner) {
    auto slicing = window_slicing::of(assigner);
    if (!slicing)
      return std::nullopt;
    if (const auto* t = dynamic_cast<const tumbling_event_time_windows*>(&assigner))
      return sliced_windows{t->size(), t->size(), t->offset(), slicing->slice};
    const auto& s = dynamic_cast<const sliding_event_time_windows&>(assigner);
    return sliced_windows{s.size(), s.slide(), s.offset(), slicing->slice};
  }

  /// The end of the slice holding `timestamp`. Slices and windows are bounded as the
  /// assigners' (time_window::for_each_holding): the last slice and the last windows end at
  /// INT64_MAX, the first ones start at INT64_MIN.
  std::int64_t slice_end(std::int64_t timestamp) const {
    return time_window::aligned(timestamp, slice, offset).end;
  }
  /// The slice ending at `slice_end`.
  time_window slice_window(std::int64_t slice_end) const {
    return time_window::aligned(slice_end - 1, slice, offset);
  }
  /// Calls `f(window)` for the windows holding `timestamp`, latest start first (the assigner's
  /// order).
  template <class F>
  void for_each_window(std::int64_t timestamp, F&& f) const {
    time_window::for_each_holding(timestamp, size, slide, offset, std::forward<F>(f));
  }
  /// The end of the last window holding the slice that ends at `slice_end`.
  std::int64_t last_window_end(std::int64_t slice_end) const {
    std::int64_t end = slice_end;
    bool first = true;
    for_each_window(slice_end - 1, [&](const time_window& w) {
      if (first)
        end = w.end;
      first = false;
    });
    return end;
  }
  /// The end of the first slice of `w`.
  std::int64_t first_slice_end(const time_window& w) const {
    // A window cut at INT64_MIN has its whole length before its end; any other its whole
    // length after its start (one cut at INT64_MAX too).
    if (w.start == std::numeric_limits<std::int64_t>::min())
      return saturating_sub(w.end, size - slice);
    return saturating_add(w.start, slice);
  }
  /// Calls `f(window)` for the windows ending at `end`: one, or all windows cut at INT64_MAX.
  template <class F>
  void for_each_window_ending(std::int64_t end, F&& f) const {
    if (end == std::numeric_limits<std::int64_t>::max())
      for_each_window(end - 1, f);
    else
      f(time_window{saturating_sub(end, size), end});
  }
};

/// `Local` is the function's contents policy (reducing_contents, aggregating_contents); the
/// input is the LocalWindowAggregate's partials (key, accumulator), stamped with a timestamp of
/// the slice they belong to.
template <class K, class Local, class Out>
class slicing_window_operator final
  : public one_input_operator<std::pair<K, typename Local::state_type>> {
public:
  using state_type = typename Local::state_type;
  using In = std::pair<K, state_type>;
  using result_type = typename Local::result_type;
  using function_type = internal_window_function<result_type, Out, K, time_window>;

  slicing_window_operator(sliced_windows windows, std::int64_t allowed_lateness, Local contents,
                          std::unique_ptr<function_type> fn, const operator_context& ctx,
                          std::unique_ptr<output<Out>> out)
    : windows_(windows),
      allowed_lateness_(allowed_lateness),
      contents_(std::move(contents)),
      fn_(std::move(fn)),
      clears_per_window_(
        dynamic_cast<pass_through_window_function<result_type, K, time_window>*>(fn_.get())
        == nullptr),
      max_parallelism_(ctx.key_group_max_parallelism),
      range_(ctx.key_groups),
      backend_(ctx.state_backend, ctx.key_groups),
      timers_(backend_, "window-timers", ctx.key_groups, ctx.processing_time),
      time_(ctx.time),
      window_store_(&window_key_, "window-", true),
      global_store_(&current_, ""),
      process_context_(ctx, window_store_, global_store_),
      out_(std::move(out)) {
    if (allowed_lateness_ < 0)
      throw std::invalid_argument("The allowed lateness cannot be negative.");
    if (windows_.slice <= 0 || windows_.size < windows_.slide)
      throw std::logic_error("a slicing window operator over windows that do not slice");
    timers_.set_handlers([this](const timer& t) { on_timer(t); }, [](const timer&) {});
    process_context_.set_clocks([this] { return watermark_; },
                                [this] { return timers_.current_processing_time(); });
  }

  void initialize_state(const state::operator_state_restore& restore) override {
    if (!restore.has_keyed_state())
      return;
    if (auto restored = backend_.get().restore(restore.keyed_handles()); !restored)
      throw std::runtime_error(restored.error().message);
    restored_ = true;
  }

  void open() override {
    auto& backend = backend_.get();
    current_.backend = &backend;
    window_key_.backend = &backend;
    contents_state_ = backend.register_state("window-slice-contents");
    window_contents_state_ = backend.register_state("window-contents");
    fired_state_ = backend.register_state("window-slice-fired");
    if (restored_)
      load_restored(backend);
    // The heap backend takes the entries straight into each snapshot (no copy in its maps
    // between snapshots): what the restore left there goes.
    participating_ = backend.add_snapshot_participant(&participant_);
    if (participating_ && restored_) {
      for (auto state : {contents_state_, window_contents_state_, fired_state_})
        for (int group = range_.first; group <= range_.last; ++group) {
          std::vector<std::string> keys;
          backend.for_each(state, group, {}, [&](std::string_view k, std::string_view) {
            keys.emplace_back(k);
          });
          for (const auto& k : keys)
            backend.remove(state, group, k);
        }
      for (auto& [end, s] : slices_)
        s.in_backend = false;
      for (auto& [end, s] : own_windows_)
        s.in_backend = false;
    }
    timers_.open();
  }

  void process_element(const In& partial) override {
    const auto timestamp =
      time_ != nullptr && time_->has_timestamp ? time_->timestamp : no_timestamp;
    check_has_timestamp(timestamp);
    const K& key = partial.first;
    const auto hash = key_hash(key);
    const int group = assign_to_key_group(hash, max_parallelism_);
    if (!range_.contains(group))
      throw std::logic_error("Key group " + std::to_string(group)
                             + " is not in this subtask's range: the record reached the wrong "
                               "subtask");
    const auto end = windows_.slice_end(timestamp);
    if (end - 1 > watermark_ && fired_.empty() && own_windows_.empty()) {
      // Every window of the slice ends after it and is still ahead of the watermark: no window
      // is late or fires now (the usual case).
      add(slice_at(end), key, hash, group, partial.second);
      return;
    }
    bool any = false;
    windows_.for_each_window(timestamp, [&](const time_window& w) {
      if (!is_window_late(w, allowed_lateness_, true, watermark_))
        any = true;
    });
    if (!any) {
      if (is_element_late(timestamp, allowed_lateness_, true, watermark_))
        ++late_dropped_;
      return;
    }
    add(slice_at(end), key, hash, group, partial.second);
    windows_.for_each_window(timestamp, [&](const time_window& w) {
      if (is_window_late(w, allowed_lateness_, true, watermark_))
        return;
      const bool own = recreated(group, w) || find_own(w, key, hash) != nullptr;
      if (own) {
        add(own_windows_[w], key, hash, group, partial.second);
        if (clears_per_window_ && allowed_lateness_ > 0)
          register_key_timer(key, group, w, cleanup_time(w, allowed_lateness_, true));
      }
      if (w.max_timestamp() <= watermark_)
        // EventTimeTrigger.onElement: FIRE for a window the watermark passed.
        fire_one(key, hash, group, w);
      else if (own || fired_through(group) >= w.max_timestamp())
        // A window of its own, or one that fired before the restore for this key group: this
        // key's own timer, as the WindowOperator's trigger registers one.
        register_key_timer(key, group, w, w.max_timestamp());
    });
  }

  void process_watermark(std::int64_t watermark) override {
    if (watermark > watermark_) {
      watermark_ = watermark;
      while (!pending_fires_.empty() || !pending_cleanups_.empty()) {
        auto next = std::numeric_limits<std::int64_t>::max();
        if (!pending_fires_.empty())
          next = *pending_fires_.begin();
        if (!pending_cleanups_.empty() && *pending_cleanups_.begin() < next)
          next = *pending_cleanups_.begin();
        if (next > watermark)
          break;
        // Key timers of earlier windows first: the WindowOperator's timer order.
        timers_.advance_watermark(next - 1);
        if (!pending_fires_.empty() && *pending_fires_.begin() == next) {
          pending_fires_.erase(pending_fires_.begin());
          windows_.for_each_window_ending(next + 1, [&](const time_window& w) { fire_all(w); });
        }
        if (!pending_cleanups_.empty() && *pending_cleanups_.begin() == next) {
          pending_cleanups_.erase(pending_cleanups_.begin());
          clean_up_all(window_ending(next + 1 - allowed_lateness_));
        }
        timers_.advance_watermark(next);
      }
      timers_.advance_watermark(watermark);
      expire_slices();
      // Every window that fired before the restore is behind the watermark now: late or fired
      // again by its own timer. The per-record path needs the key groups' watermarks no more.
      if (!fired_.empty() && watermark_ >= max_fired_) {
        fired_.clear();
        max_fired_ = min_watermark;
      }
      while (!own_windows_.empty()
             && cleanup_time(own_windows_.begin()->first, allowed_lateness_, true)
                  <= watermark_)
        drop_first(own_windows_, window_contents_state_);
    }
    this->emit_watermark(watermark);
  }

  std::int64_t late_records_dropped() const noexcept override { return late_dropped_; }

  state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) override {
    auto& backend = backend_.get();
    if (!participating_) {
      const std::uint32_t ids[] = {contents_state_, window_contents_state_, fired_state_};
      capture()->for_each_entry(
        [&](int state, int group, std::string_view key, std::string_view value) {
          backend.put(ids[state], group, key, value);
        });
      for (auto& [end, s] : slices_)
        s.in_backend = true;
      for (auto& [end, s] : own_windows_)
        s.in_backend = true;
    }
    // A participating operator writes its entries from begin_snapshot (below).
    state::operator_snapshot snapshot;
    snapshot.keyed_upload = backend.snapshot(checkpoint_id);
    return snapshot;
  }

  ~slicing_window_operator() override {
    if (participating_)
      backend_.get().remove_snapshot_participant(&participant_);
  }

  void notify_checkpoint_complete(std::int64_t checkpoint_id) override {
    backend_.notify_checkpoint_complete(checkpoint_id);
  }

  /// Open slices and (key, slice) accumulators (for tests).
  std::pair<std::size_t, std::size_t> num_slices() const {
    std::size_t entries = 0;
    for (const auto& [end, s] : slices_)
      entries += s.table->size();
    return {slices_.size(), entries};
  }

private:
  struct slice_entry {
    K key;
    state_type acc;
    std::int32_t hash = 0;
  };
  using slice_table = keyed_value_table<slice_entry>;
  struct slice {
    /// Shared with the snapshots whose upload has not written it yet (see writable()).
    std::shared_ptr<slice_table> table = std::make_shared<slice_table>();
    /// A snapshot wrote its entries into the backend: they go from there when it expires.
    bool in_backend = false;
  };

  /// The keys of one window firing, their slices merged (a dense array behind an index of
  /// positions, reused from window to window).
  struct merged_entry {
    const K* key;
    state_type acc;
    std::int32_t hash;
    std::int32_t group;
  };
  class merge_table {
  public:
    void reset(std::size_t expected) {
      entries_.clear();
      std::size_t capacity = 16;
      while (capacity < expected * 2)
        capacity *= 2;
      if (index_.size() != capacity)
        index_.assign(capacity, -1);
      else
        std::fill(index_.begin(), index_.end(), -1);
      mask_ = capacity - 1;
    }
    /// Adds `e`'s accumulator under its key (merged into what is there, in call order).
    template <class Merge>
    void add(const slice_entry& e, std::int32_t group, Merge&& merge) {
      if ((entries_.size() + 1) * 2 > index_.size())
        grow();
      for (auto i = spread(e.hash) & mask_;; i = (i + 1) & mask_) {
        auto at = index_[i];
        if (at < 0) {
          index_[i] = static_cast<std::int32_t>(entries_.size());
          entries_.push_back(merged_entry{&e.key, e.acc, e.hash, group});
          return;
        }
        auto& m = entries_[static_cast<std::size_t>(at)];
        if (m.hash == e.hash && same_key(*m.key, e.key)) {
          m.acc = merge(std::move(m.acc), e.acc);
          return;
        }
      }
    }
    std::vector<merged_entry>& entries() { return entries_; }

  private:
    static std::size_t spread(std::int32_t h) noexcept {
      return static_cast<std::size_t>(
        (static_cast<std::uint64_t>(static_cast<std::uint32_t>(h)) * 0x9e3779b97f4a7c15ULL) >> 32);
    }
    void grow() {
      index_.assign(index_.size() * 2, -1);
      mask_ = index_.size() - 1;
      for (std::size_t n = 0; n < entries_.size(); ++n) {
        auto i = spread(entries_[n].hash) & mask_;
        while (index_[i] >= 0)
          i = (i + 1) & mask_;
        index_[i] = static_cast<std::int32_t>(n);
      }
    }
    std::vector<std::int32_t> index_;
    std::vector<merged_entry> entries_;
    std::size_t mask_ = 0;
  };

  /// What a snapshot holds, captured at its synchronous part: the slices' and own windows'
  /// tables (shared, copied on write) and each key group's fired watermark. It refers to
  /// nothing of the operator, which may go before the upload ends.
  class captured_entries final : public state::participant_snapshot {
  public:
    struct table_ref {
      time_window window;
      std::shared_ptr<const slice_table> table;
      /// 0: a slice ("window-slice-contents"), 1: a window of its own ("window-contents").
      int state;
    };

    captured_entries(key_group_range range, std::vector<table_ref> tables,
                     std::vector<std::int64_t> fired)
      : range_(range),
        tables_(std::move(tables)),
        fired_(std::move(fired)) {}

    /// Calls `f(state, group, key, value)` for every entry: state 0 the slices
    /// ("window-slice-contents"), 1 the windows of their own ("window-contents"), 2 the fired
    /// watermark of each key group holding slices ("window-slice-fired").
    template <class F>
    void for_each_entry(F&& f) const {
      std::vector<bool> groups(static_cast<std::size_t>(range_.last - range_.first + 1), false);
      std::string key_bytes;
      std::string bytes;
      std::string window_bytes;
      for (const auto& t : tables_) {
        window_bytes.clear();
        t.window.append_to(window_bytes);
        t.table->for_each([&](int group, const slice_entry& e) {
          key_bytes.clear();
          append_key(e.key, key_bytes);
          key_bytes.append(window_bytes);
          bytes.clear();
          Local::encode(e.acc, bytes);
          f(t.state, group, std::string_view(key_bytes), std::string_view(bytes));
          if (t.state == 0)
            groups[static_cast<std::size_t>(group - range_.first)] = true;
        });
      }
      for (int group = range_.first; group <= range_.last; ++group) {
        auto i = static_cast<std::size_t>(group - range_.first);
        if (!groups[i])
          continue;
        bytes.clear();
        append_ordered_int64(bytes, fired_[i]);
        f(2, group, std::string_view(), std::string_view(bytes));
      }
    }

    void write_key_group(std::int32_t group, state::key_group_entries_writer& writer) override {
      static constexpr const char* names[] = {"window-slice-contents", "window-contents",
                                              "window-slice-fired"};
      if (!split_) {
        split_ = true;
        split();
      }
      if (!range_.contains(group))
        return;
      auto& entries_of = groups_[static_cast<std::size_t>(group - range_.first)];
      for (std::size_t state = 0; state < 3; ++state) {
        std::string_view entries = entries_of[state];
        if (entries.empty())
          continue;
        writer.begin_state(names[state]);
        while (!entries.empty()) {
          auto key = take(entries, read_length(entries));
          auto value = take(entries, read_length(entries));
          writer.add(key, value);
        }
        std::string().swap(entries_of[state]);
      }
    }

  private:
    /// One pass over the tables: each key group's entries one after another in one buffer per
    /// state (no allocation per entry), length-prefixed.
    void split() {
      groups_.assign(static_cast<std::size_t>(range_.last - range_.first + 1), {});
      for_each_entry([&](int state, int group, std::string_view key, std::string_view value) {
        auto& out =
          groups_[static_cast<std::size_t>(group - range_.first)][static_cast<std::size_t>(state)];
        append_length(out, key.size());
        out.append(key);
        append_length(out, value.size());
        out.append(value);
      });
      // The tables are no longer read: their owner changes them without copying from now on.
      tables_.clear();
    }
    static void append_length(std::string& out, std::size_t n) {
      auto length = static_cast<std::uint32_t>(n);
      out.append(reinterpret_cast<const char*>(&length), sizeof length);
    }
    static std::size_t read_length(std::string_view& in) {
      std::uint32_t length = 0;
      std::memcpy(&length, in.data(), sizeof length);
      in.remove_prefix(sizeof length);
      return length;
    }
    static std::string_view take(std::string_view& in, std::size_t n) {
      auto out = in.substr(0, n);
      in.remove_prefix(n);
      return out;
    }

    key_group_range range_;
    std::vector<table_ref> tables_;
    std::vector<std::int64_t> fired_;
    bool split_ = false;
    std::vector<std::array<std::string, 3>> groups_;
  };

  /// The entries a snapshot holds, as of now (the tables shared, not copied).
  std::unique_ptr<captured_entries> capture() {
    std::vector<typename captured_entries::table_ref> tables;
    tables.reserve(slices_.size() + own_windows_.size());
    for (const auto& [end, s] : slices_)
      tables.push_back({window_of(end), s.table, 0});
    for (const auto& [w, s] : own_windows_)
      tables.push_back({w, s.table, 1});
    std::vector<std::int64_t> fired(static_cast<std::size_t>(range_.last - range_.first + 1));
    for (int group = range_.first; group <= range_.last; ++group)
      fired[static_cast<std::size_t>(group - range_.first)] =
        std::max(fired_through(group), watermark_);
    return std::make_unique<captured_entries>(range_, std::move(tables), std::move(fired));
  }

  /// Has the heap backend write this operator's entries into each key group of its snapshots:
  /// captured in the synchronous part, written by the upload.
  class participant final : public state::snapshot_participant {
  public:
    explicit participant(slicing_window_operator& op) : op_(op) {}
    std::unique_ptr<state::participant_snapshot> capture_snapshot() override {
      return op_.capture();
    }
    // A backend that asks for no capture writes synchronously, from one all the same.
    void begin_snapshot() override { pending_ = op_.capture(); }
    void write_key_group(std::int32_t group, state::key_group_entries_writer& writer) override {
      if (pending_)
        pending_->write_key_group(group, writer);
    }
    void end_snapshot() override { pending_.reset(); }

  private:
    slicing_window_operator& op_;
    std::unique_ptr<captured_entries> pending_;
  };

  void add(slice& s, const K& key, std::int32_t hash, int group, const state_type& acc) {
    auto& table = writable(s);
    if (auto* e = table.find(hash, [&](const slice_entry& x) { return same_key(x.key, key); }))
      e->acc = contents_.merge_states(std::move(e->acc), acc);
    else
      table.insert(hash, group, slice_entry{key, acc, hash});
  }

  /// `s`'s table to change: a copy of it first while a snapshot's upload still reads it (Flink's
  /// CopyOnWriteStateMap, per slice: a snapshot shares the tables, the first change after it
  /// copies the one it changes).
  slice_table& writable(slice& s) {
    if (s.table.use_count() != 1) {
      auto copy = std::make_shared<slice_table>();
      copy->copy_from(*s.table);
      s.table = std::move(copy);
    } else {
      // The upload thread let go of it (a release decrement): its reads happen before our writes.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *s.table;
  }

  /// The window ending at `end` (but at INT64_MAX, where windows of other starts end too).
  time_window window_ending(std::int64_t end) const {
    return {saturating_sub(end, windows_.size), end};
  }
  /// The slice ending at `end`; a window of its own.
  time_window window_of(std::int64_t end) const { return windows_.slice_window(end); }
  static const time_window& window_of(const time_window& w) { return w; }

  std::int64_t slice_expiry(std::int64_t slice_end) const {
    return cleanup_time(window_ending(windows_.last_window_end(slice_end)), allowed_lateness_,
                        true);
  }

  /// The slice ending at `end`, opened (its windows' firing and cleanup times noted) if new.
  slice& slice_at(std::int64_t end) {
    if (last_ != nullptr && last_end_ == end)
      return *last_;
    auto [it, inserted] = slices_.try_emplace(end);
    if (inserted)
      note_windows(end);
    last_ = &it->second;
    last_end_ = end;
    return *last_;
  }

  /// The firing and cleanup times still ahead of the windows holding the slice ending at `end`.
  void note_windows(std::int64_t end) {
    windows_.for_each_window(end - 1, [&](const time_window& w) {
      if (w.max_timestamp() > watermark_)
        pending_fires_.insert(w.max_timestamp());
      if (allowed_lateness_ > 0 && clears_per_window_) {
        auto cleanup = cleanup_time(w, allowed_lateness_, true);
        if (cleanup > watermark_ && cleanup != std::numeric_limits<std::int64_t>::max())
          pending_cleanups_.insert(cleanup);
      }
    });
  }

  /// Whether `w` was cleaned up before the restore in `group`: the WindowOperator re-creates such
  /// a window for an element that comes before the watermark passes it again, with only the
  /// elements since the restore; the slices also hold the older ones of the window's later
  /// slices, so such a window keeps its own accumulator per key, in own_windows_.
  bool recreated(int group, const time_window& w) const {
    return !fired_.empty() && cleanup_time(w, allowed_lateness_, true) <= fired_through(group);
  }

  /// The key's own accumulator of the window ending at `end`, if it has one.
  slice_entry* find_own(const time_window& w, const K& key, std::int32_t hash) {
    if (own_windows_.empty())
      return nullptr;
    auto it = own_windows_.find(w);
    if (it == own_windows_.end())
      return nullptr;
    return it->second.table->find(hash, [&](const slice_entry& x) { return same_key(x.key, key); });
  }

  /// The watermark up to which this key group's windows fired before a restore.
  std::int64_t fired_through(int group) const {
    if (fired_.empty())
      return min_watermark;
    return fired_[static_cast<std::size_t>(group - range_.first)];
  }

  /// Fires `w` for every key with contents in its slices (but those whose key group fired it
  /// before a restore).
  void fire_all(const time_window& w) {
    auto first = slices_.lower_bound(windows_.first_slice_end(w));
    auto last = slices_.upper_bound(w.end);
    if (first == last)
      return;
    const bool skip_some = !fired_.empty() && w.max_timestamp() <= max_fired_;
    auto own = own_windows_.find(w);
    auto* own_table = own == own_windows_.end() ? nullptr : own->second.table.get();
    auto fire = [&](const K& key, std::int32_t hash, int group, const state_type& acc) {
      if (skip_some && fired_through(group) >= w.max_timestamp())
        return;
      // A key with its own accumulator of the window fires by its own timer.
      if (own_table != nullptr
          && own_table->find(hash, [&](const slice_entry& x) { return same_key(x.key, key); }))
        return;
      call_function(key, group, w, contents_.result_of(acc));
      if (allowed_lateness_ == 0)
        clear_window_state(key, group, w);
    };
    if (std::next(first) == last) {
      // One slice (tumbling windows, or a sliding window's only open slice): no merging.
      first->second.table->for_each(
        [&](int group, const slice_entry& e) { fire(e.key, e.hash, group, e.acc); });
      return;
    }
    merge_window(first, last);
    for (auto& m : merged_.entries())
      fire(*m.key, m.hash, m.group, m.acc);
  }

  /// Merges the slices [first, last) into merged_.
  template <class It>
  void merge_window(It first, It last) {
    std::size_t expected = 0;
    for (auto it = first; it != last; ++it)
      expected = std::max(expected, it->second.table->size());
    merged_.reset(expected);
    auto merge = [this](state_type a, const state_type& b) {
      return contents_.merge_states(std::move(a), b);
    };
    for (auto it = first; it != last; ++it)
      it->second.table->for_each(
        [&](int group, const slice_entry& e) { merged_.add(e, group, merge); });
  }

  /// Removes the per-window state of `w` for every key with contents in its slices.
  void clean_up_all(const time_window& w) {
    auto first = slices_.lower_bound(windows_.first_slice_end(w));
    auto last = slices_.upper_bound(w.end);
    if (first == last)
      return;
    merge_window(first, last);
    auto own = own_windows_.find(w);
    for (auto& m : merged_.entries()) {
      // A key with its own accumulator of the window is cleaned up by its own timer.
      if (own != own_windows_.end()
          && own->second.table->find(m.hash, [&](const slice_entry& x) {
               return same_key(x.key, *m.key);
             }))
        continue;
      clear_window_state(*m.key, m.group, w);
    }
  }

  /// Fires `w` for one key (a late firing, or the key's own timer).
  void fire_one(const K& key, std::int32_t hash, int group, const time_window& w) {
    if (auto* own = find_own(w, key, hash)) {
      call_function(key, group, w, contents_.result_of(own->acc));
      return;
    }
    if (recreated(group, w))
      return;
    std::optional<state_type> acc;
    for (auto it = slices_.lower_bound(windows_.first_slice_end(w));
         it != slices_.end() && it->first <= w.end; ++it) {
      auto* e =
        it->second.table->find(hash, [&](const slice_entry& x) { return same_key(x.key, key); });
      if (e == nullptr)
        continue;
      if (acc)
        acc = contents_.merge_states(std::move(*acc), e->acc);
      else
        acc = e->acc;
    }
    if (acc)
      call_function(key, group, w, contents_.result_of(*acc));
  }

  void register_key_timer(const K& key, int group, const time_window& w, std::int64_t time) {
    if (time == std::numeric_limits<std::int64_t>::max())
      return;
    key_bytes_.clear();
    append_key(key, key_bytes_);
    window_bytes_.clear();
    w.append_to(window_bytes_);
    timers_.register_event_time_timer(group, key_bytes_, window_bytes_, time);
  }

  void on_timer(const timer& t) {
    auto w = time_window::from_bytes(t.ns);
    if (!w)
      throw std::logic_error("a window timer whose namespace is not a window");
    K key = keyed_state_detail::from_bytes<K>(t.key);
    // The WindowOperator's onEventTime with EventTimeTrigger: FIRE at the window's max
    // timestamp, its per-window state cleared at its cleanup time (the same with no lateness).
    if (t.timestamp == w->max_timestamp())
      fire_one(key, key_hash(key), t.key_group, *w);
    if (t.timestamp == cleanup_time(*w, allowed_lateness_, true))
      clear_window_state(key, t.key_group, *w);
  }

  void call_function(const K& key, int group, const time_window& w, const result_type& input) {
    bind(key, group, w);
    process_context_.set_window(&w);
    std::optional<element_time> saved;
    if (time_ != nullptr) {
      saved = *time_;
      time_->set(w.max_timestamp());
    }
    fn_->process(key, w, process_context_, input, *out_);
    if (saved)
      *time_ = *saved;
    process_context_.set_window(nullptr);
  }

  /// Flink's clearAllState for a window of a non-merging assigner: the function's per-window
  /// state (the contents are the slices', which expire on their own).
  void clear_window_state(const K& key, int group, const time_window& w) {
    if (!clears_per_window_)
      return;
    bind(key, group, w);
    process_context_.set_window(&w);
    fn_->clear(w, process_context_);
    process_context_.set_window(nullptr);
    window_store_.clear_all();
  }

  /// The key (and key + window) the function's state stores see.
  void bind(const K& key, int group, const time_window& w) {
    current_.key_group = group;
    window_key_.key_group = group;
    current_.bytes.clear();
    type_serializer<K>::write(key, current_.bytes);
    if (!(bound_window_.start == w.start && bound_window_.end == w.end) || bound_bytes_.empty()) {
      // A batch binds the same window for each of its keys: its bytes once.
      bound_window_ = w;
      bound_bytes_.clear();
      w.append_to(bound_bytes_);
    }
    window_key_.bytes = current_.bytes;
    window_key_.bytes.insert(window_key_.bytes.end(), bound_bytes_.begin(), bound_bytes_.end());
  }

  static void append_key(const K& key, std::string& out) {
    std::vector<char> bytes;
    type_serializer<K>::write(key, bytes);
    out.append(bytes.data(), bytes.size());
  }

  /// Drops the slices whose last window was cleaned up.
  void expire_slices() {
    while (!slices_.empty() && slice_expiry(slices_.begin()->first) <= watermark_) {
      if (last_ == &slices_.begin()->second)
        last_ = nullptr;
      drop_first(slices_, contents_state_);
    }
  }

  /// Drops the first table of `tables` (from `state` too, when a snapshot wrote it there).
  template <class Tables>
  void drop_first(Tables& tables, std::uint32_t state) {
    auto it = tables.begin();
    if (it->second.in_backend) {
      auto& backend = backend_.get();
      window_bytes_.clear();
      window_of(it->first).append_to(window_bytes_);
      it->second.table->for_each([&](int group, const slice_entry& e) {
        key_bytes_.clear();
        append_key(e.key, key_bytes_);
        key_bytes_.append(window_bytes_);
        backend.remove(state, group, key_bytes_);
      });
    }
    tables.erase(it);
  }

  /// Whether `w` is `size` long, or shorter where the int64 range cuts it.
  static bool of_size(const time_window& w, std::int64_t size) {
    auto length = time_window_detail::wide(w.end) - w.start;
    if (w.start == std::numeric_limits<std::int64_t>::min()
        || w.end == std::numeric_limits<std::int64_t>::max())
      return length > 0 && length <= size;
    return length == size;
  }

  /// The slices and fired watermarks of this subtask's key groups from the restored backend.
  void load_restored(state::keyed_state_backend& backend) {
    fired_.assign(static_cast<std::size_t>(range_.last - range_.first + 1), min_watermark);
    for (int group = range_.first; group <= range_.last; ++group) {
      backend.for_each(fired_state_, group, {}, [&](std::string_view, std::string_view value) {
        if (value.size() != 8)
          throw std::runtime_error("window-slice-fired: a malformed entry");
        auto fired = read_ordered_int64(value, 0);
        fired_[static_cast<std::size_t>(group - range_.first)] = fired;
        max_fired_ = std::max(max_fired_, fired);
      });
      backend.for_each(contents_state_, group, {}, [&](std::string_view k, std::string_view v) {
        byte_reader in(std::span<const char>(k.data(), k.size()));
        K key = type_serializer<K>::read(in);
        auto rest = k.substr(k.size() - in.remaining());
        auto w = time_window::from_bytes(rest);
        if (!w || w->end == std::numeric_limits<std::int64_t>::min()
            || *w != windows_.slice_window(w->end))
          throw std::runtime_error("window-slice-contents: an entry that is not a slice of "
                                   + std::to_string(windows_.slice) + " ms");
        auto& s = slice_at(w->end);
        s.in_backend = true;
        auto hash = key_hash(key);
        writable(s).insert(hash, group, slice_entry{std::move(key), contents_.decode(v), hash});
      });
    }
    for (int group = range_.first; group <= range_.last; ++group)
      backend.for_each(window_contents_state_, group, {},
                       [&](std::string_view k, std::string_view v) {
                         byte_reader in(std::span<const char>(k.data(), k.size()));
                         K key = type_serializer<K>::read(in);
                         auto w = time_window::from_bytes(k.substr(k.size() - in.remaining()));
                         if (!w || !of_size(*w, windows_.size))
                           throw std::runtime_error(
                             "window-contents: an entry that is not a window of "
                             + std::to_string(windows_.size) + " ms (restored into windows of "
                             "another size?)");
                         auto& s = own_windows_[*w];
                         s.in_backend = true;
                         auto hash = key_hash(key);
                         writable(s).insert(hash, group,
                                        slice_entry{std::move(key), contents_.decode(v), hash});
                       });
    last_ = nullptr;
  }

  sliced_windows windows_;
  std::int64_t allowed_lateness_;
  Local contents_;
  std::unique_ptr<function_type> fn_;
  /// The function may keep per-window state (a user's process function): each (key, window)
  /// is cleared at its cleanup time, as the WindowOperator does.
  bool clears_per_window_;
  int max_parallelism_;
  key_group_range range_;
  keyed_backend_holder backend_;
  operator_timers timers_;
  element_time* time_;
  bool restored_ = false;
  std::int64_t watermark_ = min_watermark;
  /// The open slices by end.
  std::map<std::int64_t, slice> slices_;
  /// Windows with an accumulator of their own per key (in the order of their ends): taken over
  /// from the WindowOperator's state, or re-created after a restore (see recreated()).
  std::map<time_window, slice> own_windows_;
  slice* last_ = nullptr;
  std::int64_t last_end_ = 0;
  /// Max timestamps of the windows still to fire, cleanup times of the windows still to clean
  /// up (only with allowed lateness and a function with per-window state).
  std::set<std::int64_t> pending_fires_;
  std::set<std::int64_t> pending_cleanups_;
  /// After a restore: per key group of the range, the watermark its windows fired through.
  std::vector<std::int64_t> fired_;
  std::int64_t max_fired_ = min_watermark;
  merge_table merged_;
  std::uint32_t contents_state_ = 0;
  std::uint32_t fired_state_ = 0;
  std::uint32_t window_contents_state_ = 0;
  keyed_state_detail::current_key current_;
  keyed_state_detail::current_key window_key_;
  window_state_store window_store_;
  window_state_store global_store_;
  window_context<time_window> process_context_;
  output_ref<Out> out_;
  std::int64_t late_dropped_ = 0;
  std::string key_bytes_;
  std::string window_bytes_;
  participant participant_{*this};
  bool participating_ = false;
  /// The window bind() last bound, and its bytes.
  time_window bound_window_;
  std::string bound_bytes_;
};

} // namespace flint::streaming
