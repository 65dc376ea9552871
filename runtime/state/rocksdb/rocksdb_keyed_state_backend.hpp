#pragma once
/// `state.backend.type: rocksdb` (Flink's EmbeddedRocksDBStateBackend): a subtask's keyed state in
/// one RocksDB instance on local disk, so it may be larger than memory.
///
/// One instance for all states, keys prefixed with the 2-byte key group and the 4-byte state
/// number (`rocksdb_instance.hpp`): a key group's entries are one contiguous range, and one
/// column family per state would cost a memtable each. Snapshots:
/// - full (`incremental: false`): a RocksDB snapshot at the barrier; the upload writes it key
///   group by key group in the format of `backend_entry_format.hpp`, as the hashmap backend does,
///   so either backend restores it;
/// - incremental: a RocksDB checkpoint (hard links) at the barrier; the upload copies its SST
///   files not already in `shared/` from the last completed checkpoint, and the rest into the
///   checkpoint's directory, as one incremental handle. Without a checkpoint directory it writes
///   a full snapshot inline instead.
/// A restore opens a single incremental handle of its key groups directly; otherwise (rescaling,
/// full handles) it copies the entries of its key groups into its instance.
///
/// With `state.backend.rocksdb.cache.size` > 0 (64 MiB unless set) the hot entries are served
/// and written on the heap (`rocksdb_write_cache.hpp`) and reach RocksDB in batches, at the
/// latest when a snapshot is taken, so snapshots and restores are as without the cache.

#include "runtime/state/keyed_state_backend.hpp"
#include "runtime/state/rocksdb/rocksdb_write_cache.hpp"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace flint::state {

class rocksdb_keyed_state_backend final : public keyed_state_backend {
public:
  /// Opens an empty instance in `options.local_dir` (made; whatever it held is removed; empty: a
  /// fresh directory under the system's temporary directory). The directory goes with the
  /// backend, once the last upload of its snapshots has finished.
  static expected<std::unique_ptr<rocksdb_keyed_state_backend>> create(
    const keyed_state_backend_options& options, key_group_range key_groups);
  ~rocksdb_keyed_state_backend() override;

  /// As the hashmap backend: numbers from 0 by name, kept in the instance. A RocksDB failure here
  /// or in get/put/remove/for_each (a full disk) throws std::runtime_error; a key group outside
  /// the backend's or an unknown state number is a bug (std::out_of_range).
  std::uint32_t register_state(const std::string& name) override;
  bool get(std::uint32_t state, std::int32_t key_group, std::string_view key,
           std::string& value) override;
  void put(std::uint32_t state, std::int32_t key_group, std::string_view key,
           std::string_view value) override;
  void remove(std::uint32_t state, std::int32_t key_group, std::string_view key) override;
  /// `f` must not change this backend.
  void for_each(std::uint32_t state, std::int32_t key_group, std::string_view prefix,
                const std::function<void(std::string_view, std::string_view)>& f) override;

  keyed_snapshot_upload snapshot(std::int64_t checkpoint_id) override;
  /// The next incremental snapshot refers to this checkpoint's SST files instead of uploading
  /// them again.
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override;
  expected<unit> restore(const std::vector<keyed_state_handle>& handles) override;

  /// The instance's directory (`<local dir>/db`).
  std::string instance_dir() const;
  /// What the cache of hot entries did so far (all zero without one).
  rocksdb_cache_stats cache_stats() const;
  /// A few of the instance's RocksDB options as RocksDB reports them (write_buffer_size,
  /// compaction_style as RocksDB's enum number, write_buffer_manager, block_cache_capacity,
  /// max_open_files, max_write_buffer_number), to show which settings took effect.
  std::map<std::string, std::string> rocksdb_settings() const;

  struct core; // the instance and what outlives the backend until uploads finish

private:
  rocksdb_keyed_state_backend(std::shared_ptr<core> core, key_group_range key_groups,
                              const keyed_state_backend_options& options);

  /// The entry key of `key` into key_.
  const std::string& entry_key(std::uint32_t state, std::int32_t key_group, std::string_view key);
  expected<unit> restore_instance(const keyed_state_handle& handle);
  expected<unit> restore_entries(const keyed_state_handle& handle);
  expected<unit> load_state_names();

  std::shared_ptr<core> core_;
  key_group_range key_groups_;
  bool incremental_ = false;
  rocksdb_backend_options rocksdb_options_;
  /// Null when `state.backend.rocksdb.cache.size` is 0.
  std::unique_ptr<rocksdb_write_cache> cache_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> numbers_;
  std::string key_;
  /// The state and key group key_ was built for (no_state: none).
  static constexpr std::uint32_t no_state = ~std::uint32_t{0};
  std::uint32_t key_state_ = no_state;
  std::int32_t key_group_ = -1;
  int restores_ = 0;
  bool snapshots_taken_ = false;
};

} // namespace flint::state
