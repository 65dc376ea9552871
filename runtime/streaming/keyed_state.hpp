#pragma once
/// The value state of the keys of one key group (the heap keyed state backend's table), as a
/// flat open-addressing table: one probe sequence over (hash tag, index) slots, entries kept
/// dense. The entry holds the key (a pair of key and value) or is the value itself when the key
/// is one of its fields (`key_by<N>`), which halves its size for string keys.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace flint::streaming {

template <class E>
class keyed_value_table {
public:
  /// The entry whose hash is `hash` and for which `same_key(entry)` holds, or null.
  template <class SameKey>
  E* find(std::size_t hash, SameKey&& same_key) {
    if (slots_.empty())
      return nullptr;
    auto mask = slots_.size() - 1;
    auto t = tag(hash);
    for (auto i = hash & mask;; i = (i + 1) & mask) {
      const auto& s = slots_[i];
      if (s.index == empty)
        return nullptr;
      if (s.tag == t && same_key(entries_[s.index]))
        return &entries_[s.index];
    }
  }

  /// Adds `entry` (whose key is absent) under `hash`; returns the stored entry.
  E& insert(std::size_t hash, E entry) {
    if ((entries_.size() + 1) * 2 > slots_.size())
      grow();
    entries_.push_back(std::move(entry));
    hashes_.push_back(hash);
    place(hash, static_cast<std::uint32_t>(entries_.size() - 1));
    return entries_.back();
  }

  std::size_t size() const noexcept { return entries_.size(); }
  const std::vector<E>& entries() const noexcept { return entries_; }

private:
  static constexpr std::uint32_t empty = 0xffffffffu;
  /// 8 bytes, so a cache line holds 8 probes: the high half of the hash (the low half picks the
  /// slot) and the entry's index.
  struct slot {
    std::uint32_t tag = 0;
    std::uint32_t index = empty;
  };

  static std::uint32_t tag(std::size_t hash) noexcept {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32);
  }

  void place(std::size_t hash, std::uint32_t index) {
    auto mask = slots_.size() - 1;
    for (auto i = hash & mask;; i = (i + 1) & mask)
      if (slots_[i].index == empty) {
        slots_[i] = slot{tag(hash), index};
        return;
      }
  }

  void grow() {
    std::vector<slot> old(slots_.empty() ? 16 : slots_.size() * 2);
    old.swap(slots_);
    for (const auto& s : old)
      if (s.index != empty)
        place(hashes_[s.index], s.index);
  }

  std::vector<slot> slots_;
  std::vector<E> entries_;
  /// Each entry's full hash, read only when the table grows.
  std::vector<std::size_t> hashes_;
};

} // namespace flint::streaming
