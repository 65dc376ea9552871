#pragma once
/// The timers of one time domain in memory, earliest first, each once (Flink's
/// HeapPriorityQueueSet: a priority queue backed by a hash set, for fast de-duplication and
/// deletes). The order is kept per distinct timestamp rather than per timer: many keys share a
/// timestamp (every auction's timer at a window's end), so the timers are grouped in one bucket
/// per timestamp (a small ordered map), registering is a hash probe and an append, and the
/// bucket at the head is sorted once (by key group, key and namespace) when it comes due. A
/// trigger registers its window's timer for every element and nearly always finds it there, so
/// that path is one hash probe without copies.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace flint::streaming {

/// One registered timer (Flink's InternalTimer): when, for which key and namespace.
struct timer {
  std::int64_t timestamp = 0;
  std::int32_t key_group = 0;
  std::string key;
  std::string ns;

  /// Time first (firing order); the rest makes one timer per (key, timestamp, namespace), as
  /// the key group follows from the key.
  friend auto operator<=>(const timer&, const timer&) = default;
  friend bool operator==(const timer&, const timer&) = default;
};

/// A timer's identity without copies, to look timers up on the per-record path.
struct timer_view {
  std::int64_t timestamp = 0;
  std::int32_t key_group = 0;
  std::string_view key;
  std::string_view ns;
};

class timer_queue_set {
public:
  timer_queue_set() = default;
  // The buckets point into the hash set's nodes; a move keeps the nodes.
  timer_queue_set(const timer_queue_set&) = delete;
  timer_queue_set& operator=(const timer_queue_set&) = delete;
  timer_queue_set(timer_queue_set&&) noexcept = default;
  timer_queue_set& operator=(timer_queue_set&&) noexcept = default;

  /// Adds the timer; false when it is there already.
  bool add(const timer_view& t);
  bool add(timer&& t);
  /// Removes the timer; false when there was none.
  bool remove(const timer_view& t);

  /// The earliest timer (ties by key group, key, namespace); nullptr when empty.
  const timer* peek();
  /// Removes the earliest timer and hands it over; the queue must not be empty.
  timer poll();
  /// The earliest timestamp; the queue must not be empty.
  std::int64_t peek_timestamp() const { return buckets_.begin()->first; }

  /// Calls `f(timer)` for every timer, in no order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& e : timers_)
      f(e.t);
  }

  std::size_t size() const { return timers_.size(); }
  bool empty() const { return timers_.empty(); }
  /// The number of distinct timestamps.
  std::size_t num_timestamps() const { return buckets_.size(); }
  void clear();

private:
  /// A timer with its hash (the set's own hash function is a plain read then: the standard
  /// library recomputes a custom hash of each node it walks past in a bucket) and its place in
  /// its timestamp's bucket.
  struct entry {
    timer t;
    std::size_t hash = 0;
    mutable std::size_t slot = 0;
  };
  struct hash {
    using is_transparent = void;
    static std::size_t of(const timer_view& t) noexcept;
    std::size_t operator()(const timer_view& t) const noexcept { return of(t); }
    std::size_t operator()(const entry& e) const noexcept { return e.hash; }
  };
  struct equal {
    using is_transparent = void;
    static timer_view view(const entry& e) {
      return {e.t.timestamp, e.t.key_group, e.t.key, e.t.ns};
    }
    static const timer_view& view(const timer_view& t) { return t; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const auto& x = view(a);
      const auto& y = view(b);
      return x.timestamp == y.timestamp && x.key_group == y.key_group && x.key == y.key &&
             x.ns == y.ns;
    }
  };
  /// A bucket's reference to a timer, with what sorts it without following the pointer in most
  /// comparisons: the key group and the key's first eight bytes (zero-padded, big-endian).
  struct slot {
    std::int32_t key_group = 0;
    std::uint64_t key_prefix = 0;
    const entry* e = nullptr; // nullptr once removed
  };
  /// The timers of one timestamp: [head, sorted_end) sorted, the rest appended since.
  struct bucket {
    std::vector<slot> slots;
    std::size_t head = 0;
    std::size_t sorted_end = 0;
    std::size_t live = 0;
  };
  using bucket_map = std::map<std::int64_t, bucket>;

  static slot slot_of(const entry& e);
  bucket& bucket_for(std::int64_t timestamp);
  void erase_bucket(bucket_map::iterator it);
  /// Sorts what was appended to the head bucket since it was last sorted, and moves its head
  /// past removed timers.
  void prepare_head();
  /// Drops the removed timers' slots of `b`.
  static void compact(bucket& b);

  /// Owns the timers; its nodes do not move, so the buckets point into them.
  std::unordered_set<entry, hash, equal> timers_;
  bucket_map buckets_;
  /// The bucket the last add went to (registers come in runs at one timestamp); a map node,
  /// so a move of the map keeps it.
  bucket_map::value_type* last_ = nullptr;
};

} // namespace flint::streaming
