#pragma once
/// The value state of the keys of one key group (the heap keyed state backend's table), as a
/// flat open-addressing table: one probe sequence over (hash, index) slots, entries kept dense.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace flint::streaming {

template <class K, class V>
class keyed_value_table {
public:
  /// The value of `key` (whose hash is `hash`), or null.
  V* find(const K& key, std::size_t hash) {
    if (slots_.empty())
      return nullptr;
    auto mask = slots_.size() - 1;
    for (auto i = hash & mask;; i = (i + 1) & mask) {
      const auto& s = slots_[i];
      if (s.index == empty)
        return nullptr;
      if (s.hash == hash && entries_[s.index].first == key)
        return &entries_[s.index].second;
    }
  }

  /// Adds `key` (absent) with `value`; returns the stored value.
  V& insert(K key, std::size_t hash, V value) {
    if ((entries_.size() + 1) * 2 > slots_.size())
      grow();
    entries_.emplace_back(std::move(key), std::move(value));
    place(hash, static_cast<std::uint32_t>(entries_.size() - 1));
    return entries_.back().second;
  }

  std::size_t size() const noexcept { return entries_.size(); }
  const std::vector<std::pair<K, V>>& entries() const noexcept { return entries_; }

private:
  static constexpr std::uint32_t empty = 0xffffffffu;
  struct slot {
    std::size_t hash = 0;
    std::uint32_t index = empty;
  };

  void place(std::size_t hash, std::uint32_t index) {
    auto mask = slots_.size() - 1;
    for (auto i = hash & mask;; i = (i + 1) & mask)
      if (slots_[i].index == empty) {
        slots_[i] = slot{hash, index};
        return;
      }
  }

  void grow() {
    std::vector<slot> old(slots_.empty() ? 16 : slots_.size() * 2);
    old.swap(slots_);
    for (const auto& s : old)
      if (s.index != empty)
        place(s.hash, s.index);
  }

  std::vector<slot> slots_;
  std::vector<std::pair<K, V>> entries_;
};

} // namespace flint::streaming
