#pragma once
/// Timers of one operator subtask under one name (Flink's InternalTimerServiceImpl with its two
/// key-group-partitioned priority queues, event time and processing time). Keys and namespaces
/// are bytes: a keyed process function's namespace is empty, a window operator's is the
/// window's bytes.
///
/// Timers are checkpointed as keyed state, as two states of their own
/// ("_timer_state/event_<name>", "_timer_state/processing_<name>", Flink's names), so that they
/// are restored and rescaled with the rest of the keyed state and in both backends. An ordered
/// index in memory holds them for firing. With a backend that keeps them in at all times
/// (RocksDB) every register and delete writes through; with one that takes snapshot
/// participants (the heap backend) the index is the only copy between snapshots and the
/// snapshot serializes the timers from it (as Flink snapshots its heap timer queues), so a
/// register costs no backend write.
///
/// Used on the task's thread only; never fires concurrently with the caller (timers fire only
/// inside advance_watermark and advance_processing_time).

#include "runtime/state/key_group_range.hpp"
#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/streaming/time/timer_queue_set.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flint::streaming {

class internal_timer_service final : state::snapshot_participant {
public:
  /// Called for each due timer, after it was removed; it may register and delete timers.
  using on_timer = std::function<void(const timer&)>;

  /// The watermark before the first one arrives (Flink's Long.MIN_VALUE).
  static constexpr std::int64_t no_watermark = std::numeric_limits<std::int64_t>::min();

  /// Timers named `name` (e.g. "window-timers") of the subtask owning `key_groups`, kept in
  /// `backend`, which must outlive this service. Touches the backend only from the first
  /// register, delete or restore on, so it may be built before the backend restored.
  internal_timer_service(state::keyed_state_backend& backend, std::string name,
                         state::key_group_range key_groups);
  ~internal_timer_service() override;
  // The backend holds a pointer to this service.
  internal_timer_service(const internal_timer_service&) = delete;
  internal_timer_service& operator=(const internal_timer_service&) = delete;

  const std::string& name() const { return name_; }

  /// Registers a timer; false when the same one was there already (nothing changes then).
  /// `key_group` must be one of this subtask's.
  bool register_event_time_timer(std::int32_t key_group, std::string_view key, std::string_view ns,
                                 std::int64_t timestamp);
  bool register_processing_time_timer(std::int32_t key_group, std::string_view key,
                                      std::string_view ns, std::int64_t timestamp);
  /// Deletes a timer; false when there was none.
  bool delete_event_time_timer(std::int32_t key_group, std::string_view key, std::string_view ns,
                               std::int64_t timestamp);
  bool delete_processing_time_timer(std::int32_t key_group, std::string_view key,
                                    std::string_view ns, std::int64_t timestamp);

  /// Sets the watermark to `watermark` and fires every event-time timer at or before it, in time
  /// order, including those `fire` registers while due. An older watermark than the current one
  /// is taken as it comes (the task's valve only forwards rising ones).
  void advance_watermark(std::int64_t watermark, const on_timer& fire);
  /// Fires every processing-time timer at or before `now`, in time order, as above.
  void advance_processing_time(std::int64_t now, const on_timer& fire);

  std::int64_t current_watermark() const { return current_watermark_; }
  /// The earliest processing-time timer, for the task to schedule its wake-up (Flink's
  /// nextTimer); none when there are no processing-time timers.
  std::optional<std::int64_t> next_processing_time() const;
  /// The earliest event-time timer, if any.
  std::optional<std::int64_t> next_event_time() const;

  std::size_t num_event_time_timers() const { return event_time_.index.size(); }
  std::size_t num_processing_time_timers() const { return processing_time_.index.size(); }

  /// Rebuilds the in-memory index from the backend, after the backend restored: the timers of
  /// every key group of this subtask, whatever parallelism wrote them.
  void restore();

private:
  void begin_snapshot() override;
  void write_key_group(std::int32_t key_group, state::key_group_entries_writer& writer) override;
  void end_snapshot() override;

  /// One time domain: its backend state and its index.
  struct queue {
    std::string state_name;
    std::uint32_t state = 0;
    timer_queue_set index;
    /// During a snapshot: the timers of each key group (index: key group - first), in the
    /// order of their backend keys.
    std::vector<std::vector<const timer*>> snapshot_groups;
  };

  bool add(queue& q, std::int32_t key_group, std::string_view key, std::string_view ns,
           std::int64_t timestamp);
  bool remove(queue& q, std::int32_t key_group, std::string_view key, std::string_view ns,
              std::int64_t timestamp);
  void fire_until(queue& q, std::int64_t time, const on_timer& fire);
  void restore(queue& q);
  void ensure_registered();
  void check_key_group(std::int32_t key_group) const;

  state::keyed_state_backend& backend_;
  std::string name_;
  state::key_group_range key_groups_;
  bool registered_ = false;
  /// The index is the only copy between snapshots (the backend took this as a participant).
  bool index_only_ = false;
  queue event_time_;
  queue processing_time_;
  std::int64_t current_watermark_ = no_watermark;
};

/// The backend key of a timer: ordered time, length-prefixed key, namespace (public for tests).
std::string timer_backend_key(std::int64_t timestamp, std::string_view key, std::string_view ns);
/// The timer of a backend key in `key_group`; none when the bytes are not one.
std::optional<timer> timer_from_backend_key(std::int32_t key_group, std::string_view bytes);

} // namespace flint::streaming
