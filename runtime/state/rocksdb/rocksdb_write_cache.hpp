#pragma once
/// The hot entries of a RocksDB keyed state backend on the heap
/// (`state.backend.rocksdb.cache.size`), in the spirit of Flink 2's ForSt cache: reads of a
/// cached key, present or absent, touch no RocksDB; writes and removals stay here (write-back)
/// until they go to RocksDB in one WriteBatch — when the cache fills (entries not used lately, by
/// CLOCK's second chance, down to 7/8 of the size), before a snapshot (all of them: a snapshot is
/// exactly what RocksDB holds) and before a prefix iteration of a key group (that key group's).
/// Absent keys are cached too, so a key seen for the first time costs one RocksDB read, not one
/// per record.
///
/// Keys are whole entry keys (`rocksdb_instance.hpp`: key group, state number, key). Used on the
/// backend's thread only; private to the rocksdb backend.

#include "runtime/common/expected.hpp"
#include "runtime/state/key_group_range.hpp"

#include <cstdint>
#include <string>
#include <string_view>
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
  /// A slot of the open-addressing index (linear probing): the key's hash and its entry.
  struct slot {
    std::uint64_t hash = 0;
    entry* e = nullptr;
  };

  /// The cached entry of `key`, marked as used; null if not cached.
  entry* find(std::string_view key);
  /// A new entry for `key` (not cached yet), not marked as used.
  entry& insert(std::int32_t key_group, std::string_view key);
  /// Marks `e` as holding a write not yet in RocksDB.
  void make_dirty(entry& e);
  void make_clean(entry& e);
  /// Entries too large to cache go straight to RocksDB.
  bool too_large(std::string_view key, std::string_view value) const;
  /// Evicts entries not used lately once the cache is over its size; their writes go to
  /// RocksDB in one batch.
  expected<unit> evict_if_full(rocksdb_instance& db);
  void resize(entry& e, std::size_t value_size);
  void erase(entry& e);
  /// Index maintenance: the slot of `key` (or the empty one where it would go), and growing.
  std::size_t slot_of(std::uint64_t hash, std::string_view key) const;
  void grow();

  std::uint64_t capacity_;
  key_group_range key_groups_;
  /// Power-of-two size, at most half full; entries are owned here (allocated one by one).
  std::vector<slot> slots_;
  std::size_t count_ = 0;
  /// CLOCK's hand: the slot eviction looks at next (modulo the index's size).
  std::size_t hand_ = 0;
  /// Per key group (index: key group - first), its dirty entries.
  std::vector<entry*> dirty_;
  /// The entry the last call found or made: an operator's put follows its get of the same key.
  entry* last_ = nullptr;
  std::uint64_t bytes_ = 0;
  rocksdb_cache_stats stats_;
};

} // namespace flint::state
