#pragma once
/// The keyed state of one operator subtask behind one interface (Flink's KeyedStateBackend, cut to
/// bytes): `state.backend.type: hashmap` keeps it on the heap, `rocksdb` in a RocksDB instance on
/// local disk (state larger than memory, incremental checkpoints). Operators keep typed values;
/// here keys and values are their serialized bytes, each entry tagged with its key group, and
/// each registered state (a ValueState, ListState or MapState of the user, the reduce's value) is
/// a namespace of its own.
///
/// Used on the task's thread only, except the upload of a snapshot, which runs on the task's
/// upload thread while the task goes on (it must not touch live state).

#include "runtime/common/expected.hpp"
#include "runtime/state/key_group_range.hpp"
#include "runtime/state/state_handles.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flint::state {

/// Where a snapshot's files go (Flink's CheckpointStreamFactory for one task).
struct snapshot_target {
  /// `<job dir>/chk-<n>`: files of this checkpoint only (exclusive state). Empty: no checkpoint
  /// directory — the state travels inline in the handle.
  std::string checkpoint_dir;
  /// `<job dir>/shared`: files several checkpoints refer to (incremental RocksDB SST files).
  std::string shared_dir;
  /// Unique for the operator subtask and attempt, e.g. "<operator id>-<subtask>-<attempt>".
  std::string file_prefix;
};

/// The asynchronous part of a snapshot: writes what the synchronous part captured and returns
/// the handles (one per subtask, usually). Runs on another thread, once.
using keyed_snapshot_upload =
  std::function<expected<std::vector<keyed_state_handle>>(const snapshot_target&)>;

/// `state.backend.rocksdb.*` (Flink's RocksDBConfigurableOptions, the ones users set), and
/// Flint's cache of hot entries in front of RocksDB. Unset (nullopt): the predefined options'
/// value, else Flink's default.
struct rocksdb_backend_options {
  /// `state.backend.rocksdb.cache.size` (Flint's own key): bytes of hot entries kept on the heap
  /// in front of RocksDB, serving reads and absorbing writes until they are written back in
  /// batches (when it fills, before every snapshot, before a prefix iteration of their key
  /// group). 0: every get and put goes to RocksDB.
  std::uint64_t cache_bytes = 64 << 20;
  /// `state.backend.rocksdb.memory.managed`: RocksDB's block cache and write buffers share one
  /// bounded budget (`managed_bytes`), as Flink bounds them by the slot's managed memory;
  /// `block_cache_bytes` and `write_buffer_bytes` then do not apply.
  bool memory_managed = true;
  /// `state.backend.rocksdb.memory.fixed-per-slot`: the budget when `memory_managed` (Flink
  /// derives it from the slot's managed memory, which Flint does not size: 256 MiB unless set).
  std::uint64_t managed_bytes = 256 << 20;
  /// `state.backend.rocksdb.block.cache-size` (8 mb).
  std::optional<std::uint64_t> block_cache_bytes;
  /// `state.backend.rocksdb.writebuffer.size` (64 mb).
  std::optional<std::uint64_t> write_buffer_bytes;
  /// `state.backend.rocksdb.compaction.style`: LEVEL (default), UNIVERSAL or FIFO.
  std::optional<std::string> compaction_style;
  /// `state.backend.rocksdb.predefined-options`: DEFAULT, SPINNING_DISK_OPTIMIZED,
  /// SPINNING_DISK_OPTIMIZED_HIGH_MEM or FLASH_SSD_OPTIMIZED (Flink's PredefinedOptions).
  std::string predefined_options = "DEFAULT";
};

/// Which backend, from `state.backend.type` / `state.backend.incremental`.
struct keyed_state_backend_options {
  /// "hashmap" or "rocksdb".
  std::string type = "hashmap";
  bool incremental = false;
  /// A directory only this subtask's backend uses for its working files (RocksDB's instance),
  /// removed when the backend goes. Unique per attempt: what it held is cleared at the start,
  /// and it goes only once the last upload of the backend's snapshots has finished. Empty: the
  /// rocksdb backend makes one under the system's temporary directory.
  std::string local_dir;
  /// `state.backend.rocksdb.*`, for `type: rocksdb`.
  rocksdb_backend_options rocksdb;
};

class keyed_state_backend;
class key_group_entries_writer;

/// What a snapshot_participant captured in a snapshot's synchronous part (a copy-on-write
/// reference to its state, as Flink's CopyOnWriteStateMap snapshot), written on the upload
/// thread while the owner goes on: the owner copies whatever it changes while this lives.
class participant_snapshot {
public:
  virtual ~participant_snapshot() = default;
  /// Adds the entries of `key_group` as of the snapshot to `writer` (a section per state,
  /// begin_state first). Called for each key group of the backend in order, on one thread.
  virtual void write_key_group(std::int32_t key_group, key_group_entries_writer& writer) = 0;
};

/// Keyed state its owner keeps outside the backend between snapshots (a timer service's timers
/// with the hashmap backend): a backend that takes participants has each write its entries
/// into every key group of a snapshot beside the backend's own, in the backend's format, so a
/// restore (into either backend) finds them as if they had always been in the backend.
class snapshot_participant {
public:
  virtual ~snapshot_participant() = default;
  /// The participant's state as of now, to be written asynchronously; null: it writes
  /// synchronously through the three calls below.
  virtual std::unique_ptr<participant_snapshot> capture_snapshot() { return nullptr; }
  /// A snapshot starts: the next calls write its key groups.
  virtual void begin_snapshot() = 0;
  /// Adds the entries of `key_group` to `writer` (a section per state, begin_state first).
  virtual void write_key_group(std::int32_t key_group, key_group_entries_writer& writer) = 0;
  /// The snapshot has every key group.
  virtual void end_snapshot() = 0;
};

class keyed_state_backend {
public:
  virtual ~keyed_state_backend() = default;

  /// A state's number for the calls below, by its name (the same name: the same number; also
  /// across a restore).
  virtual std::uint32_t register_state(const std::string& name) = 0;

  /// The value of `key` in `state`, into `value`; false when there is none.
  virtual bool get(std::uint32_t state, std::int32_t key_group, std::string_view key,
                   std::string& value) = 0;
  virtual void put(std::uint32_t state, std::int32_t key_group, std::string_view key,
                   std::string_view value) = 0;
  virtual void remove(std::uint32_t state, std::int32_t key_group, std::string_view key) = 0;
  /// Calls `f(key, value)` for every entry of `state` in `key_group` whose key starts with
  /// `prefix` (a MapState's entries are stored under key + user key), in key order.
  virtual void for_each(std::uint32_t state, std::int32_t key_group, std::string_view prefix,
                        const std::function<void(std::string_view, std::string_view)>& f) = 0;

  /// The synchronous part of checkpoint `checkpoint_id`: whatever the upload needs is captured
  /// now (a copy, or RocksDB's own snapshot), so processing goes on at once.
  virtual keyed_snapshot_upload snapshot(std::int64_t checkpoint_id) = 0;
  /// Registers `p` until remove_snapshot_participant; false when this backend takes none (the
  /// owner then keeps its state in the backend at all times). The heap backend takes them: its
  /// snapshot serializes every key group synchronously.
  virtual bool add_snapshot_participant(snapshot_participant* p) {
    (void)p;
    return false;
  }
  virtual void remove_snapshot_participant(snapshot_participant* p) { (void)p; }

  /// Checkpoint `checkpoint_id` completed (an incremental backend may now build on it).
  virtual void notify_checkpoint_complete(std::int64_t checkpoint_id) { (void)checkpoint_id; }

  /// Before any other call: the state of this subtask's key groups from `handles` (any backend's
  /// handles, also from another parallelism: only this subtask's range is taken).
  virtual expected<unit> restore(const std::vector<keyed_state_handle>& handles) = 0;
};

/// The backend `options` name for the subtask owning `key_groups`; an unknown type is
/// errc::invalid_argument naming `state.backend.type`.
expected<std::unique_ptr<keyed_state_backend>> make_keyed_state_backend(
  const keyed_state_backend_options& options, key_group_range key_groups);

} // namespace flint::state
