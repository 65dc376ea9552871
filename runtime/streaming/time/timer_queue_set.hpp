#pragma once
/// The timers of one time domain in memory, earliest first, each once (Flink's
/// HeapPriorityQueueSet: a priority queue backed by a hash set, for fast de-duplication and
/// deletes). A trigger registers its window's timer for every element and nearly always finds it
/// there, so that path is one hash probe without copies; only a new timer pays for the order.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>

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
  // A copy would point into the original's timers; a move keeps the nodes.
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
  const timer* peek() const { return order_.empty() ? nullptr : &(*order_.begin())->t; }
  /// Removes the earliest timer and hands it over; the queue must not be empty.
  timer poll();

  /// Calls `f(timer)` for every timer, in no order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& e : timers_)
      f(e.t);
  }

  std::size_t size() const { return timers_.size(); }
  bool empty() const { return timers_.empty(); }
  void clear();

private:
  /// A timer with its hash: the set's own hash function is a plain read then (the standard
  /// library recomputes a custom hash of each node it walks past in a bucket).
  struct entry {
    timer t;
    std::size_t hash = 0;
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
  struct order {
    bool operator()(const entry* a, const entry* b) const { return a->t < b->t; }
  };

  /// Owns the timers; its nodes do not move, so order_ points into them.
  std::unordered_set<entry, hash, equal> timers_;
  std::set<const entry*, order> order_;
};

} // namespace flint::streaming
