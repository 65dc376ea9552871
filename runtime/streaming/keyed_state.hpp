#pragma once
/// The value state of one keyed operator subtask: every key of its key-group range in one flat
/// open-addressing table whose slots hold the entries themselves, each tagged with its key group
/// (as RocksDB's backend prefixes each key with its group, rather than a map per group as the
/// heap backend). A lookup is one probe run in one array — one cache miss, where an index array
/// beside an entry array costs two — and needs no key group: the group is computed (and checked
/// against the subtask's range) once per key, when the key is first inserted.
///
/// The entry holds the key (a pair of key and value) or is the value itself when the key is one
/// of its fields (`key_by<N>`).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace flint::streaming {

/// Equality of the `n` bytes at `x` with the `m` bytes at `y` (a string key against another, or
/// against a key read in place from a record's bytes), without a call into memcmp for short keys.
[[gnu::always_inline]] inline bool same_key_bytes(const char* x, std::size_t n, const char* y,
                                                  std::size_t m) {
  if (n != m)
    return false;
  // Two overlapping loads from each end cover 4..16 bytes.
  auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof word);
    return word;
  };
  if (n >= 8 && n <= 16)
    return load(x, std::uint64_t{}) == load(y, std::uint64_t{})
      && load(x + n - 8, std::uint64_t{}) == load(y + n - 8, std::uint64_t{});
  if (n >= 4 && n < 8)
    return load(x, std::uint32_t{}) == load(y, std::uint32_t{})
      && load(x + n - 4, std::uint32_t{}) == load(y + n - 4, std::uint32_t{});
  if (n > 16)
    return std::memcmp(x, y, n) == 0;
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != y[i])
      return false;
  return true;
}

/// Key equality for the state table; strings (the usual key) without a call into memcmp.
/// Always inlined: called once per record in a probe, a call costs as much as the compare.
template <class K>
[[gnu::always_inline]] inline bool same_key(const K& a, const K& b) {
  if constexpr (std::is_same_v<K, std::string>)
    return same_key_bytes(a.data(), a.size(), b.data(), b.size());
  else
    return a == b;
}

template <class E>
class keyed_value_table {
public:
  keyed_value_table() = default;
  keyed_value_table(const keyed_value_table&) = delete;
  keyed_value_table& operator=(const keyed_value_table&) = delete;
  ~keyed_value_table() { clear(); }

  /// The entry whose key hash (Java's hashCode of the key, as for key groups) is `key_hash` and
  /// for which `same(entry)` holds, or null.
  template <class Same>
  E* find(std::int32_t key_hash, Same&& same) {
    if (capacity_ == 0)
      return nullptr;
    auto h = static_cast<std::uint32_t>(key_hash);
    auto mask = capacity_ - 1;
    for (auto i = spread(h) & mask;; i = (i + 1) & mask) {
      auto& s = slots_[i];
      if (s.key_group < 0)
        return nullptr;
      if (s.key_hash == h && same(s.entry()))
        return &s.entry();
    }
  }

  /// Adds `entry`, whose key is absent, hashes to `key_hash` and belongs to `key_group`; returns
  /// the stored entry, valid until the next insert.
  E& insert(std::int32_t key_hash, int key_group, E entry) {
    if ((size_ + 1) * 4 > capacity_ * 3)
      grow();
    ++size_;
    return place(static_cast<std::uint32_t>(key_hash), key_group, std::move(entry));
  }

  std::size_t size() const noexcept { return size_; }

  /// Becomes a copy of `other`, slot for slot (one pass, no rehashing: a copy-on-write
  /// snapshot's copy; inserting `other`'s entries in its slot order into a growing table would
  /// pile them up in long probe runs).
  void copy_from(const keyed_value_table& other) {
    clear();
    if (other.capacity_ == 0)
      return;
    slots_ = std::make_unique<slot[]>(other.capacity_);
    capacity_ = other.capacity_;
    for (std::size_t i = 0; i < capacity_; ++i) {
      const auto& from = other.slots_[i];
      if (from.key_group < 0)
        continue;
      ::new (static_cast<void*>(slots_[i].storage)) E(from.entry());
      slots_[i].key_hash = from.key_hash;
      slots_[i].key_group = from.key_group;
    }
    size_ = other.size_;
  }

  /// Calls `f(entry)` for every entry of `key_group` (what a snapshot of that group would hold).
  template <class F>
  void for_each_in_key_group(int key_group, F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].key_group == key_group)
        f(slots_[i].entry());
  }

  /// Calls `f(key_group, entry)` for every entry (a snapshot's one pass over the table).
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].key_group >= 0)
        f(slots_[i].key_group, slots_[i].entry());
  }

  void clear() noexcept {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].key_group >= 0)
        slots_[i].entry().~E();
    slots_.reset();
    capacity_ = 0;
    size_ = 0;
  }

private:
  /// The entry's storage beside its key hash and key group (-1 marks an empty slot); the entry
  /// is constructed only in used slots.
  struct slot {
    std::uint32_t key_hash = 0;
    std::int32_t key_group = -1;
    alignas(E) unsigned char storage[sizeof(E)];
    E& entry() noexcept { return *std::launder(reinterpret_cast<E*>(storage)); }
    const E& entry() const noexcept { return *std::launder(reinterpret_cast<const E*>(storage)); }
  };

  /// Java hashes of short strings differ mostly in their low bits: one multiply spreads them.
  static std::size_t spread(std::uint32_t h) noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(h) * 0x9e3779b97f4a7c15ULL) >> 32);
  }

  E& place(std::uint32_t h, int key_group, E&& entry) {
    auto mask = capacity_ - 1;
    for (auto i = spread(h) & mask;; i = (i + 1) & mask)
      if (slots_[i].key_group < 0) {
        auto* e = ::new (static_cast<void*>(slots_[i].storage)) E(std::move(entry));
        slots_[i].key_hash = h;
        slots_[i].key_group = key_group;
        return *e;
      }
  }

  void grow() {
    auto old = std::move(slots_);
    auto old_capacity = capacity_;
    capacity_ = capacity_ == 0 ? 16 : capacity_ * 2;
    slots_ = std::make_unique<slot[]>(capacity_);
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].key_group >= 0) {
        place(old[i].key_hash, old[i].key_group, std::move(old[i].entry()));
        old[i].entry().~E();
      }
  }

  std::unique_ptr<slot[]> slots_;
  /// A power of two (or 0), at most 3/4 full.
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

} // namespace flint::streaming
