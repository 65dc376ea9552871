#include "runtime/state/rocksdb/rocksdb_write_cache.hpp"

#include "runtime/state/rocksdb/rocksdb_instance.hpp"

#include <rocksdb/write_batch.h>

#include <cstring>

namespace flint::state {

namespace {

/// What an entry costs besides its key and value: the hash node, its bucket and the links.
constexpr std::uint64_t entry_overhead = 128;

/// A batch is written once it holds this many bytes (a snapshot's write-back of a large cache
/// goes as several).
constexpr std::size_t batch_bytes = 4 << 20;

} // namespace

struct rocksdb_write_cache::entry {
  /// The map's key (stable: the map's nodes do not move).
  const std::string* key = nullptr;
  std::string value;
  entry* lru_prev = nullptr;
  entry* lru_next = nullptr;
  entry* dirty_prev = nullptr;
  entry* dirty_next = nullptr;
  std::int32_t key_group = 0;
  /// False: the key has no value (never had one, or a removal not yet written back).
  bool present = false;
  /// The entry differs from RocksDB (a put or a removal to write back).
  bool dirty = false;
  /// Bytes counted against the capacity for this entry.
  std::uint64_t charged = 0;
};

namespace {

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
    dirty_(static_cast<std::size_t>(std::max(key_groups.size(), 0)), nullptr) {}

rocksdb_write_cache::~rocksdb_write_cache() = default;

bool rocksdb_write_cache::too_large(std::string_view key, std::string_view value) const {
  return key.size() + value.size() + entry_overhead > capacity_ / 8;
}

rocksdb_write_cache::entry* rocksdb_write_cache::find(std::string_view key) {
  entry* e = nullptr;
  if (last_ != nullptr && last_->key->size() == key.size()
      && std::memcmp(last_->key->data(), key.data(), key.size()) == 0) {
    e = last_;
  } else {
    auto it = entries_.find(key);
    if (it == entries_.end())
      return nullptr;
    e = &it->second;
  }
  if (e != lru_front_) {
    unlink_lru(*e);
    link_lru_front(*e);
  }
  last_ = e;
  return e;
}

rocksdb_write_cache::entry& rocksdb_write_cache::insert(std::int32_t key_group,
                                                        std::string_view key) {
  auto [it, inserted] = entries_.try_emplace(std::string(key));
  auto& e = it->second;
  e.key = &it->first;
  e.key_group = key_group;
  e.charged = key.size() + entry_overhead;
  bytes_ += e.charged;
  link_lru_front(e);
  last_ = &e;
  return e;
}

void rocksdb_write_cache::resize(entry& e, std::size_t value_size) {
  auto charged = e.key->size() + value_size + entry_overhead;
  bytes_ = bytes_ - e.charged + charged;
  e.charged = charged;
}

void rocksdb_write_cache::unlink_lru(entry& e) {
  (e.lru_prev ? e.lru_prev->lru_next : lru_front_) = e.lru_next;
  (e.lru_next ? e.lru_next->lru_prev : lru_back_) = e.lru_prev;
  e.lru_prev = e.lru_next = nullptr;
}

void rocksdb_write_cache::link_lru_front(entry& e) {
  e.lru_prev = nullptr;
  e.lru_next = lru_front_;
  (lru_front_ ? lru_front_->lru_prev : lru_back_) = &e;
  lru_front_ = &e;
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
  unlink_lru(e);
  bytes_ -= e.charged;
  if (last_ == &e)
    last_ = nullptr;
  // Erasing by key: a copy, as the key is the node's own.
  auto it = entries_.find(std::string_view(*e.key));
  entries_.erase(it);
}

expected<unit> rocksdb_write_cache::evict_if_full(rocksdb_instance& db) {
  if (bytes_ <= capacity_)
    return unit{};
  // Down to 7/8 at once: evictions come in batches, and so do their writes.
  auto low = capacity_ - capacity_ / 8;
  batch_writer batch(db, stats_);
  while (bytes_ > low && lru_back_ != nullptr && lru_back_ != lru_front_) {
    auto& e = *lru_back_;
    if (e.dirty) {
      auto written = e.present ? batch.put(*e.key, e.value) : batch.remove(*e.key);
      if (!written)
        return written;
    }
    ++stats_.evictions;
    erase(e);
  }
  return batch.write();
}

expected<bool> rocksdb_write_cache::get(rocksdb_instance& db, std::int32_t key_group,
                                        std::string_view key, std::string& value) {
  if (auto* e = find(key)) {
    ++stats_.hits;
    if (e->present)
      value.assign(e->value);
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
    e.value.assign(value);
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
  e->value.assign(value);
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
  e->value.clear();
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
    auto written = e.present ? batch.put(*e.key, e.value) : batch.remove(*e.key);
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
      auto written = e.present ? batch.put(*e.key, e.value) : batch.remove(*e.key);
      if (!written)
        return written;
      make_clean(e);
    }
  return batch.write();
}

void rocksdb_write_cache::clear() {
  entries_.clear();
  lru_front_ = lru_back_ = last_ = nullptr;
  std::fill(dirty_.begin(), dirty_.end(), nullptr);
  bytes_ = 0;
  stats_.dirty = 0;
}

rocksdb_cache_stats rocksdb_write_cache::stats() const {
  auto out = stats_;
  out.entries = entries_.size();
  out.bytes = bytes_;
  return out;
}

} // namespace flint::state
