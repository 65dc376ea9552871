#pragma once
/// The hot entries of a RocksDB keyed state backend on the heap (`state.backend.rocksdb.cache.size`),
/// in the spirit of Flink 2's ForSt cache: reads of a cached key, present or absent, touch no
/// RocksDB; writes and removals stay here (write-back) until they go to RocksDB in one
/// WriteBatch — when the cache fills (the least recently used entries, down to 7/8 of the
/// size), before a snapshot (all of them: a snapshot is exactly what RocksDB holds) and before a
/// prefix iteration of a key group (that key group's). Absent keys are cached too, so a key seen
/// for the first time costs one RocksDB read, not one per record.
///
/// Keys are whole entry keys (`rocksdb_instance.hpp`: key group, state number, key). Used on the
/// backend's thread only; private to the rocksdb backend.

#include "runtime/common/expected.hpp"
#include "runtime/state/key_group_range.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace flint::state {

class rocksdb_instance;

/// What a cache did so far, for tests and benchmarks.
struct rocksdb_cache_stats {
  /// Gets answered from the cache (a value or its absence).
  std::uint64_t hits = 0;
  /// Gets that read RocksDB.
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  /// WriteBatches written, and the entries (puts and deletes) in them.
  std::uint64_t batches = 0;
  std::uint64_t written = 0;
  /// Now: entries cached, those not yet in RocksDB, and their bytes as counted against the size.
  std::uint64_t entries = 0;
  std::uint64_t dirty = 0;
  std::uint64_t bytes = 0;
};

class rocksdb_write_cache {
public:
  /// A cache of `capacity` bytes (keys, values and bookkeeping) for `key_groups`.
  rocksdb_write_cache(std::uint64_t capacity, key_group_range key_groups);
  ~rocksdb_write_cache();
  rocksdb_write_cache(const rocksdb_write_cache&) = delete;
  rocksdb_write_cache& operator=(const rocksdb_write_cache&) = delete;

  /// The value of `key` (in `key_group`) into `value`, from the cache or else from `db`, then
  /// cached (also its absence); false when there is none.
  expected<bool> get(rocksdb_instance& db, std::int32_t key_group, std::string_view key,
                     std::string& value);
  /// Caches the write; RocksDB sees it at the next write-back.
  expected<unit> put(rocksdb_instance& db, std::int32_t key_group, std::string_view key,
                     std::string_view value);
  /// Caches the removal (a tombstone until written back).
  expected<unit> remove(rocksdb_instance& db, std::int32_t key_group, std::string_view key);

  /// Writes back the cached writes of `key_group` (they stay cached, now clean).
  expected<unit> flush(rocksdb_instance& db, std::int32_t key_group);
  /// Writes back every cached write.
  expected<unit> flush(rocksdb_instance& db);
  /// Forgets everything, written back or not (the instance under it was replaced).
  void clear();

  rocksdb_cache_stats stats() const;

private:
  struct entry;
  struct key_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>()(s);
    }
  };
  using entry_map = std::unordered_map<std::string, entry, key_hash, std::equal_to<>>;

  /// The cached entry of `key`, most recently used now; null if not cached.
  entry* find(std::string_view key);
  /// A new entry for `key` (not cached yet), most recently used.
  entry& insert(std::int32_t key_group, std::string_view key);
  /// Marks `e` as holding a write not yet in RocksDB.
  void make_dirty(entry& e);
  void make_clean(entry& e);
  /// Entries too large to cache go straight to RocksDB.
  bool too_large(std::string_view key, std::string_view value) const;
  /// Evicts the least recently used entries once the cache is over its size; their writes go
  /// to RocksDB in one batch.
  expected<unit> evict_if_full(rocksdb_instance& db);
  void resize(entry& e, std::size_t value_size);
  void unlink_lru(entry& e);
  void link_lru_front(entry& e);
  void erase(entry& e);

  std::uint64_t capacity_;
  key_group_range key_groups_;
  entry_map entries_;
  /// Most recently used first.
  entry* lru_front_ = nullptr;
  entry* lru_back_ = nullptr;
  /// Per key group (index: key group - first), its dirty entries.
  std::vector<entry*> dirty_;
  /// The entry the last call found or made: an operator's put follows its get of the same key.
  entry* last_ = nullptr;
  std::uint64_t bytes_ = 0;
  rocksdb_cache_stats stats_;
};

} // namespace flint::state
