#include "runtime/state/rocksdb/rocksdb_write_cache.hpp"

#include "runtime/state/rocksdb/rocksdb_instance.hpp"

#include <rocksdb/write_batch.h>

#include <cstring>
#include <new>

namespace flint::state {

namespace {

/// What an entry costs besides its key and value: the entry and its allocation, and its share
/// of the index (at most half full).
constexpr std::uint64_t entry_overhead = 160;

/// A batch is written once it holds this many bytes (a snapshot's write-back of a large cache
/// goes as several).
constexpr std::size_t batch_bytes = 4 << 20;

} // namespace

/// One allocation: the entry, then its key's bytes (a lookup reads the key where the entry is).
struct rocksdb_write_cache::entry {
  std::string_view key() const noexcept {
    return {reinterpret_cast<const char*>(this + 1), key_size};
  }
  static entry* make(std::string_view key) {
    auto* e = new (::operator new(sizeof(entry) + key.size())) entry;
    e->key_size = static_cast<std::uint32_t>(key.size());
    std::memcpy(reinterpret_cast<char*>(e + 1), key.data(), key.size());
    return e;
  }
  static void destroy(entry* e) noexcept {
    e->~entry();
    ::operator delete(e);
  }

  /// The value: small ones (most keyed state: a count, a small record) in the entry itself.
  std::string_view value() const noexcept {
    return large_value ? std::string_view(large) : std::string_view(small, small_size);
  }
  void set_value(std::string_view v) {
    if (v.size() <= sizeof small) {
      std::memcpy(small, v.data(), v.size());
      small_size = static_cast<std::uint8_t>(v.size());
      large_value = false;
    } else {
      large.assign(v);
      large_value = true;
    }
  }

  // What a lookup reads first, then the small value: one cache line.
  std::uint64_t hash = 0;
  std::uint32_t key_size = 0;
  std::int32_t key_group = 0;
  /// Bytes counted against the capacity for this entry.
  std::uint32_t charged = 0;
  std::uint8_t small_size = 0;
  bool large_value = false;
  /// False: the key has no value (never had one, or a removal not yet written back).
  bool present = false;
  /// The entry differs from RocksDB (a put or a removal to write back).
  bool dirty = false;
  /// Used since the clock hand last passed (CLOCK's second chance).
  bool referenced = false;
  char small[32];
  entry* dirty_prev = nullptr;
  entry* dirty_next = nullptr;
  std::string large;
};

namespace {

std::uint64_t load8(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

std::uint32_t load4(const char* p) noexcept {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

/// A hash of a short key (entry keys: 6 bytes of key group and state, then the operator's
/// serialized key, mostly under 32 bytes) in a few independent multiplies: 8-byte words, the
/// last one overlapping.
std::uint64_t hash_key(std::string_view key) noexcept {
  constexpr std::uint64_t m1 = 0x9e3779b97f4a7c15ULL;
  constexpr std::uint64_t m2 = 0xd6e8feb86659fd93ULL;
  const char* p = key.data();
  auto n = key.size();
  std::uint64_t h = n * m2;
  if (n >= 8) {
    std::uint64_t acc = 0;
    std::size_t i = 0;
    for (; i + 8 < n; i += 8)
      acc = (acc ^ load8(p + i)) * m1 + (acc >> 29);
    h ^= (acc ^ load8(p + n - 8)) * m1;
  } else if (n >= 4) {
    h ^= ((static_cast<std::uint64_t>(load4(p)) << 32) | load4(p + n - 4)) * m1;
  } else {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h ^= w * m1;
  }
  h ^= h >> 32;
  h *= m2;
  h ^= h >> 29;
  return h;
}

/// `a` and `b` (both `n` bytes) are equal: 8 bytes at a time, without a call for short keys.
bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  if (n < 8)
    return std::memcmp(a, b, n) == 0;
  for (std::size_t i = 0; i + 8 < n; i += 8)
    if (load8(a + i) != load8(b + i))
      return false;
  return load8(a + n - 8) == load8(b + n - 8);
}

/// Writes puts and deletes in batches of about batch_bytes.
class batch_writer {
public:
  explicit batch_writer(rocksdb_instance& db, rocksdb_cache_stats& stats)
    : db_(db),
      stats_(stats) {}

  expected<unit> put(std::string_view key, std::string_view value) {
    auto status = batch_.Put(key, value);
    if (!status.ok())
      return db_.failure("Cannot write back to RocksDB instance", status);
    return maybe_write();
  }
  expected<unit> remove(std::string_view key) {
    auto status = batch_.Delete(key);
    if (!status.ok())
      return db_.failure("Cannot write back to RocksDB instance", status);
    return maybe_write();
  }
  expected<unit> write() {
    if (batch_.Count() == 0)
      return unit{};
    stats_.written += static_cast<std::uint64_t>(batch_.Count());
    ++stats_.batches;
    auto status = db_.db().Write(db_.write_options(), &batch_);
    batch_.Clear();
    if (!status.ok())
      return db_.failure("Cannot write back to RocksDB instance", status);
    return unit{};
  }

private:
  expected<unit> maybe_write() {
    if (batch_.GetDataSize() >= batch_bytes)
      return write();
    return unit{};
  }

  rocksdb_instance& db_;
  rocksdb_cache_stats& stats_;
  rocksdb::WriteBatch batch_;
};

} // namespace

rocksdb_write_cache::rocksdb_write_cache(std::uint64_t capacity, key_group_range key_groups)
  : capacity_(capacity),
    key_groups_(key_groups),
    slots_(1024),
    dirty_(static_cast<std::size_t>(std::max(key_groups.size(), 0)), nullptr) {}

rocksdb_write_cache::~rocksdb_write_cache() {
  clear();
}

std::size_t rocksdb_write_cache::slot_of(std::uint64_t hash, std::string_view key) const {
  auto mask = slots_.size() - 1;
  for (auto i = hash & mask;; i = (i + 1) & mask) {
    const auto& s = slots_[i];
    if (s.e == nullptr
        || (s.hash == hash && s.e->key_size == key.size()
            && same_bytes(reinterpret_cast<const char*>(s.e + 1), key.data(), key.size())))
      return i;
  }
}

void rocksdb_write_cache::grow() {
  std::vector<slot> old(slots_.size() * 2);
  old.swap(slots_);
  auto mask = slots_.size() - 1;
  for (const auto& s : old)
    if (s.e != nullptr)
      for (auto i = s.hash & mask;; i = (i + 1) & mask)
        if (slots_[i].e == nullptr) {
          slots_[i] = s;
          break;
        }
}

bool rocksdb_write_cache::too_large(std::string_view key, std::string_view value) const {
  return key.size() + value.size() + entry_overhead > capacity_ / 8;
}

rocksdb_write_cache::entry* rocksdb_write_cache::find(std::string_view key) {
  entry* e = nullptr;
  if (last_ != nullptr && last_->key_size == key.size()
      && same_bytes(reinterpret_cast<const char*>(last_ + 1), key.data(), key.size())) {
    e = last_;
  } else {
    e = slots_[slot_of(hash_key(key), key)].e;
    if (e == nullptr)
      return nullptr;
  }
  e->referenced = true;
  last_ = e;
  return e;
}

rocksdb_write_cache::entry& rocksdb_write_cache::insert(std::int32_t key_group,
                                                        std::string_view key) {
  auto hash = hash_key(key);
  auto& s = slots_[slot_of(hash, key)];
  s.hash = hash;
  s.e = entry::make(key);
  auto& e = *s.e;
  e.hash = hash;
  e.key_group = key_group;
  if (++count_ * 2 > slots_.size())
    grow();
  // Unreferenced: a key used once goes before those used again.
  e.charged = static_cast<std::uint32_t>(key.size() + entry_overhead);
  bytes_ += e.charged;
  last_ = &e;
  return e;
}

void rocksdb_write_cache::resize(entry& e, std::size_t value_size) {
  auto charged = static_cast<std::uint32_t>(e.key_size + value_size + entry_overhead);
  bytes_ = bytes_ - e.charged + charged;
  e.charged = charged;
}

void rocksdb_write_cache::make_dirty(entry& e) {
  if (e.dirty)
    return;
  e.dirty = true;
  auto& head = dirty_[static_cast<std::size_t>(e.key_group - key_groups_.first)];
  e.dirty_prev = nullptr;
  e.dirty_next = head;
  if (head)
    head->dirty_prev = &e;
  head = &e;
  ++stats_.dirty;
}

void rocksdb_write_cache::make_clean(entry& e) {
  if (!e.dirty)
    return;
  e.dirty = false;
  auto& head = dirty_[static_cast<std::size_t>(e.key_group - key_groups_.first)];
  (e.dirty_prev ? e.dirty_prev->dirty_next : head) = e.dirty_next;
  if (e.dirty_next)
    e.dirty_next->dirty_prev = e.dirty_prev;
  e.dirty_prev = e.dirty_next = nullptr;
  --stats_.dirty;
}

void rocksdb_write_cache::erase(entry& e) {
  make_clean(e);
  bytes_ -= e.charged;
  if (last_ == &e)
    last_ = nullptr;
  // Linear probing's deletion: the entries after it in its run move back where a lookup finds
  // them without the hole.
  auto mask = slots_.size() - 1;
  auto hole = slot_of(e.hash, e.key());
  for (auto i = (hole + 1) & mask; slots_[i].e != nullptr; i = (i + 1) & mask) {
    auto home = slots_[i].hash & mask;
    // Moves back unless its home lies cyclically in (hole, i].
    bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!stays) {
      slots_[hole] = slots_[i];
      hole = i;
    }
  }
  slots_[hole] = slot{};
  --count_;
  entry::destroy(&e);
}

expected<unit> rocksdb_write_cache::evict_if_full(rocksdb_instance& db) {
  if (bytes_ <= capacity_)
    return unit{};
  // Down to 7/8 at once: evictions come in batches, and so do their writes.
  auto low = capacity_ - capacity_ / 8;
  batch_writer batch(db, stats_);
  // CLOCK over the index's slots: a referenced entry loses its mark and stays this time round;
  // the one the caller is using stays always. Erasing moves later entries of the run back into
  // the hand's slot, so the hand looks at it again.
  auto mask = slots_.size() - 1;
  while (bytes_ > low && count_ > 1) {
    auto* e = slots_[hand_ & mask].e;
    if (e == nullptr || e == last_) {
      ++hand_;
      continue;
    }
    if (e->referenced) {
      e->referenced = false;
      ++hand_;
      continue;
    }
    if (e->dirty) {
      auto written = e->present ? batch.put(e->key(), e->value()) : batch.remove(e->key());
      if (!written)
        return written;
    }
    ++stats_.evictions;
    erase(*e);
  }
  return batch.write();
}

expected<bool> rocksdb_write_cache::get(rocksdb_instance& db, std::int32_t key_group,
                                        std::string_view key, std::string& value) {
  if (auto* e = find(key)) {
    ++stats_.hits;
    if (e->present)
      value.assign(e->value());
    return e->present;
  }
  ++stats_.misses;
  auto status = db.db().Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
  if (!status.ok() && !status.IsNotFound())
    return db.failure("Cannot read from RocksDB instance", status);
  bool present = status.ok();
  if (too_large(key, present ? std::string_view(value) : std::string_view()))
    return present;
  auto& e = insert(key_group, key);
  e.present = present;
  if (present) {
    e.set_value(value);
    resize(e, value.size());
  }
  if (auto evicted = evict_if_full(db); !evicted)
    return evicted.error();
  return present;
}

expected<unit> rocksdb_write_cache::put(rocksdb_instance& db, std::int32_t key_group,
                                        std::string_view key, std::string_view value) {
  auto* e = find(key);
  if (too_large(key, value)) {
    if (e)
      erase(*e);
    auto status = db.db().Put(db.write_options(), rocksdb::Slice(key.data(), key.size()),
                              rocksdb::Slice(value.data(), value.size()));
    if (!status.ok())
      return db.failure("Cannot write to RocksDB instance", status);
    return unit{};
  }
  if (!e)
    e = &insert(key_group, key);
  e->set_value(value);
  e->present = true;
  resize(*e, value.size());
  make_dirty(*e);
  return evict_if_full(db);
}

expected<unit> rocksdb_write_cache::remove(rocksdb_instance& db, std::int32_t key_group,
                                           std::string_view key) {
  auto* e = find(key);
  if (!e)
    e = &insert(key_group, key);
  e->set_value({});
  e->present = false;
  resize(*e, 0);
  make_dirty(*e);
  return evict_if_full(db);
}

expected<unit> rocksdb_write_cache::flush(rocksdb_instance& db, std::int32_t key_group) {
  auto& head = dirty_[static_cast<std::size_t>(key_group - key_groups_.first)];
  if (head == nullptr)
    return unit{};
  batch_writer batch(db, stats_);
  while (head != nullptr) {
    auto& e = *head;
    auto written = e.present ? batch.put(e.key(), e.value()) : batch.remove(e.key());
    if (!written)
      return written;
    make_clean(e);
  }
  return batch.write();
}

expected<unit> rocksdb_write_cache::flush(rocksdb_instance& db) {
  if (stats_.dirty == 0)
    return unit{};
  batch_writer batch(db, stats_);
  for (auto& head : dirty_)
    while (head != nullptr) {
      auto& e = *head;
      auto written = e.present ? batch.put(e.key(), e.value()) : batch.remove(e.key());
      if (!written)
        return written;
      make_clean(e);
    }
  return batch.write();
}

void rocksdb_write_cache::clear() {
  for (auto& s : slots_)
    if (s.e != nullptr) {
      entry::destroy(s.e);
      s = slot{};
    }
  count_ = 0;
  last_ = nullptr;
  std::fill(dirty_.begin(), dirty_.end(), nullptr);
  bytes_ = 0;
  stats_.dirty = 0;
}

rocksdb_cache_stats rocksdb_write_cache::stats() const {
  auto out = stats_;
  out.entries = count_;
  out.bytes = bytes_;
  return out;
}

} // namespace flint::state
