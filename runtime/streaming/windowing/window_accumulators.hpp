#pragma once
/// The reduced or aggregated contents of the windows a window operator has touched since its
/// last snapshot, kept typed on the heap (the window operator's fast path with the hashmap state
/// backend). A record then costs one hash probe and the user's add, instead of a get and a put
/// of the serialized accumulator in the backend's ordered map.
///
/// Keyed by the same bytes as the backend's entry (key bytes + window bytes), so a snapshot
/// writes exactly the entries the backend would have held: `flush` puts every accumulator into
/// the backend (restore, rescale, savepoints and the RocksDB backend see the usual format) and
/// empties the table; what is not in the table is read from the backend when next touched.
///
/// An open-addressing table (linear probing, at most half full, deletion by backward shift) of
/// slots holding the key's hash, the key and the entry: a probe compares hashes in the slot
/// array and the key's bytes only on a hash match. A key of up to `inline_key_bytes` (a 64-bit
/// key and a time window: 24) lives in its slot, so a probe touches one cache line; longer keys
/// live in one byte arena, where erased windows' keys stay as garbage until it is compacted
/// (when garbage is most of it) or the table is flushed. Used on the task's thread only.

#include "runtime/state/keyed_state_backend.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flint::streaming {

/// A fast hash of short byte strings (backend keys of a few dozen bytes): 8 bytes at a time,
/// then a 64-bit finalizer. Never 0 (0 marks an empty slot).
inline std::uint64_t window_key_hash(std::string_view s) noexcept {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
  }
  if (i < s.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
  }
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 32;
  return h | 1;
}

template <class V>
class window_accumulators {
public:
  struct entry {
    V value;
    std::int32_t key_group = 0;
    /// The backend holds an (older) entry under the same key: removing the window removes it.
    bool in_backend = false;
  };

  /// The accumulator under `key`; nullptr when the table has none (the backend may).
  entry* find(std::string_view key) {
    if (size_ == 0)
      return nullptr;
    auto h = window_key_hash(key);
    for (auto i = h & mask_;; i = (i + 1) & mask_) {
      auto& s = slots_[i];
      if (s.hash == 0)
        return nullptr;
      if (s.hash == h && key_of(s) == key)
        return &*s.e;
    }
  }

  /// Adds `value` under `key`, which must not be in the table; valid until the next insert,
  /// erase or flush.
  entry& insert(std::string_view key, std::int32_t key_group, V value, bool in_backend) {
    if ((size_ + 1) * 2 > slots_.size())
      grow();
    auto h = window_key_hash(key);
    auto i = h & mask_;
    while (slots_[i].hash != 0)
      i = (i + 1) & mask_;
    auto& s = slots_[i];
    s.hash = h;
    s.length = key.size();
    if (key.size() <= inline_key_bytes) {
      std::memcpy(s.inline_key, key.data(), key.size());
    } else {
      s.offset = keys_.size();
      keys_.append(key);
    }
    s.e.emplace(entry{std::move(value), key_group, in_backend});
    ++size_;
    return *s.e;
  }

  /// Whether `key` was in the table (and whether the backend held it too, in `in_backend`).
  bool erase(std::string_view key, bool& in_backend) {
    if (size_ == 0)
      return false;
    auto h = window_key_hash(key);
    auto i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].hash == 0)
        return false;
      if (slots_[i].hash == h && key_of(slots_[i]) == key)
        break;
    }
    in_backend = slots_[i].e->in_backend;
    if (slots_[i].length > inline_key_bytes)
      garbage_ += slots_[i].length;
    // Backward shift: move each following slot of the run into the hole when its home allows.
    for (auto j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      auto& next = slots_[j];
      if (next.hash == 0)
        break;
      auto home = next.hash & mask_;
      // `next` may move to i when i lies cyclically in [home, j).
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = std::move(next);
        i = j;
      }
    }
    slots_[i] = slot{};
    --size_;
    if (garbage_ > (1u << 16) && garbage_ * 2 > keys_.size())
      compact();
    return true;
  }

  /// Puts every accumulator into `state` of `backend`, `encode(value, bytes)` writing its bytes,
  /// and empties the table: the backend is then whole for a snapshot.
  template <class Encode>
  void flush(state::keyed_state_backend& backend, std::uint32_t state, Encode&& encode) {
    std::string bytes;
    for (const auto& s : slots_) {
      if (s.hash == 0)
        continue;
      bytes.clear();
      encode(s.e->value, bytes);
      backend.put(state, s.e->key_group, key_of(s), bytes);
    }
    clear();
  }

  void clear() {
    slots_.clear();
    mask_ = 0;
    size_ = 0;
    keys_.clear();
    garbage_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

  static constexpr std::size_t inline_key_bytes = 24;

private:
  struct slot {
    /// 0: empty.
    std::uint64_t hash = 0;
    std::size_t length = 0;
    union {
      char inline_key[inline_key_bytes];
      /// In `keys_`, for a key longer than inline_key_bytes.
      std::size_t offset;
    };
    std::optional<entry> e;
  };

  std::string_view key_of(const slot& s) const {
    return s.length <= inline_key_bytes ? std::string_view(s.inline_key, s.length)
                                        : std::string_view(keys_.data() + s.offset, s.length);
  }

  void grow() {
    std::vector<slot> old = std::move(slots_);
    slots_ = std::vector<slot>(old.empty() ? 64 : old.size() * 2);
    mask_ = slots_.size() - 1;
    for (auto& s : old) {
      if (s.hash == 0)
        continue;
      auto i = s.hash & mask_;
      while (slots_[i].hash != 0)
        i = (i + 1) & mask_;
      slots_[i] = std::move(s);
    }
  }

  /// Copies the live keys into a fresh arena (the slots stay where they are).
  void compact() {
    std::string live;
    live.reserve(keys_.size() - garbage_);
    for (auto& s : slots_) {
      if (s.hash == 0 || s.length <= inline_key_bytes)
        continue;
      auto at = live.size();
      live.append(key_of(s));
      s.offset = at;
    }
    keys_ = std::move(live);
    garbage_ = 0;
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  /// Every key's bytes, one after another (erased keys' bytes are `garbage_` of them).
  std::string keys_;
  std::size_t garbage_ = 0;
};

} // namespace flint::streaming
