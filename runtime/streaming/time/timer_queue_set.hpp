#pragma once
/// The timers of one time domain in memory, earliest first, each once (Flink's
/// HeapPriorityQueueSet: a priority queue backed by a hash set, for fast de-duplication and
/// deletes: here a pool of timers indexed by an open-addressing table). The order is kept per distinct timestamp rather than per timer: many keys share a
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
  // last_ points into buckets_: a copy would point into the original's; a move keeps the nodes.
  timer_queue_set(const timer_queue_set&) = delete;
  timer_queue_set& operator=(const timer_queue_set&) = delete;
  timer_queue_set(timer_queue_set&&) noexcept = default;
  timer_queue_set& operator=(timer_queue_set&&) noexcept = default;

  /// Adds the timer; false when it is there already.
  bool add(const timer_view& t);
  bool add(timer&& t);
  /// Removes the timer; false when there was none.
  bool remove(const timer_view& t);

  /// The earliest timer (ties by key group, key, namespace), valid until the next change;
  /// nullptr when empty.
  const timer* peek();
  /// Removes the earliest timer and hands it over; the queue must not be empty.
  timer poll();
  /// The earliest timestamp; the queue must not be empty.
  std::int64_t peek_timestamp() const { return buckets_.begin()->first; }

  /// Calls `f(timer)` for every timer, in no order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& e : pool_)
      if (e.live)
        f(e.t);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// The number of distinct timestamps.
  std::size_t num_timestamps() const { return buckets_.size(); }
  void clear();

private:
  static constexpr std::uint32_t removed = 0xffffffffu;

  /// A timer in the pool, with its hash and its place in its timestamp's bucket.
  struct entry {
    timer t;
    std::uint64_t hash = 0;
    std::size_t slot = 0;
    bool live = false;
  };
  /// A bucket's reference to a timer, with what sorts it without reading the timer in most
  /// comparisons: the key group and the key's first eight bytes (zero-padded, big-endian).
  struct slot {
    std::int32_t key_group = 0;
    std::uint32_t index = removed; // in pool_; `removed` once removed
    std::uint64_t key_prefix = 0;
  };
  /// The timers of one timestamp: [head, sorted_end) sorted, the rest appended since.
  struct bucket {
    std::vector<slot> slots;
    std::size_t head = 0;
    std::size_t sorted_end = 0;
    std::size_t live = 0;
  };
  using bucket_map = std::map<std::int64_t, bucket>;

  static std::uint64_t hash_of(const timer_view& t) noexcept;
  static bool same(const entry& e, const timer_view& t) noexcept;
  /// The position in table_ of the timer, or table_.size() when there is none.
  std::size_t find(const timer_view& t, std::uint64_t h) const;
  /// The position in table_ of the pool entry `index`, which is there.
  std::size_t position_of(std::uint32_t index) const;
  void erase_at(std::size_t position);
  void grow();
  bucket& bucket_for(std::int64_t timestamp);
  void erase_bucket(bucket_map::iterator it);
  /// Sorts what was appended to the head bucket since it was last sorted, and moves its head
  /// past removed timers.
  void prepare_head();
  /// Drops the removed timers' slots of `b`.
  void compact(bucket& b);

  /// The timers; free_ lists the unused entries.
  std::vector<entry> pool_;
  std::vector<std::uint32_t> free_;
  /// Open addressing, linear probing: 0 for an empty place, else the hash's upper 32 bits (its
  /// home place too) and the pool index + 1, so probing and moving read no timer.
  std::vector<std::uint64_t> table_;
  std::size_t size_ = 0;
  bucket_map buckets_;
  /// The bucket the last add went to (registers come in runs at one timestamp); a map node,
  /// so a move of the map keeps it.
  bucket_map::value_type* last_ = nullptr;
};

} // namespace flint::streaming
