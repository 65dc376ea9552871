#include "runtime/state/rocksdb/rocksdb_keyed_state_backend.hpp"

#include "runtime/common/logging.hpp"
#include "runtime/state/backend_entry_format.hpp"
#include "runtime/state/detail/file_io.hpp"
#include "runtime/state/keyed_state_files.hpp"
#include "runtime/state/rocksdb/rocksdb_incremental_files.hpp"
#include "runtime/state/rocksdb/rocksdb_instance.hpp"
#include "runtime/state/rocksdb/rocksdb_write_cache.hpp"

#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_buffer_manager.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace flint::state {

struct rocksdb_keyed_state_backend::core {
  std::string local_dir;
  std::unique_ptr<rocksdb_instance> instance;
  rocksdb_sst_registry ssts;
  std::string instance_id;

  ~core() {
    instance.reset();
    std::error_code ec;
    std::filesystem::remove_all(local_dir, ec);
  }
};

namespace {

using core = rocksdb_keyed_state_backend::core;

std::string random_instance_id() {
  std::random_device random;
  char id[9];
  std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(random()));
  return id;
}

std::string instance_dir_of(const std::string& local_dir) {
  return local_dir + "/db";
}

/// Puts entries in write batches of a few MB (a restore writes every entry once).
class batch_writer {
public:
  explicit batch_writer(rocksdb_instance& instance) : instance_(instance) {}

  expected<unit> put(std::string_view key, std::string_view value) {
    if (auto status = batch_.Put(key, value); !status.ok())
      return instance_.failure("Cannot restore into RocksDB instance", status);
    if (batch_.GetDataSize() >= 4 << 20)
      return flush();
    return unit{};
  }

  expected<unit> flush() {
    if (batch_.Count() == 0)
      return unit{};
    auto status = instance_.db().Write(instance_.write_options(), &batch_);
    batch_.Clear();
    if (!status.ok())
      return instance_.failure("Cannot restore into RocksDB instance", status);
    return unit{};
  }

private:
  rocksdb_instance& instance_;
  rocksdb::WriteBatch batch_;
};

/// What a snapshot holds until its upload is done or dropped: the RocksDB snapshot, and for an
/// incremental one the local checkpoint directory and the SSTs it may refer to.
struct snapshot_capture {
  std::shared_ptr<core> backend;
  const rocksdb::Snapshot* snapshot = nullptr;
  std::vector<std::string> names;
  key_group_range key_groups;
  std::string checkpoint_dir;
  rocksdb_upload_context context;
  error failed;

  /// Once the upload is done, or it never runs.
  void release() {
    if (snapshot)
      backend->instance->db().ReleaseSnapshot(std::exchange(snapshot, nullptr));
    if (!checkpoint_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(std::exchange(checkpoint_dir, {}), ec);
    }
  }
  ~snapshot_capture() { release(); }
};

/// The snapshot's key groups in the full format, into `file_path` (or inline).
expected<keyed_state_handle> write_full(const snapshot_capture& capture,
                                        const std::string& file_path) {
  auto& instance = *capture.backend->instance;
  auto writer = keyed_state_writer::create(file_path, capture.key_groups.first);
  if (!writer)
    return writer.error();
  rocksdb::ReadOptions read;
  read.snapshot = capture.snapshot;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(instance.db().NewIterator(read));
  std::string start;
  rocksdb_key_prefix(start, capture.key_groups.first, 0);
  it->Seek(start);
  key_group_entries_writer entries;
  for (auto group = capture.key_groups.first; group <= capture.key_groups.last; ++group) {
    std::uint32_t current = 0;
    bool open = false;
    for (; it->Valid(); it->Next()) {
      auto key = it->key().ToStringView();
      if (key.size() < rocksdb_key_prefix_size || rocksdb_key_group(key) != group)
        break;
      auto state = rocksdb_state_number(key);
      if (!open || state != current) {
        if (state >= capture.names.size())
          return make_error(errc::internal,
                            "RocksDB instance " + instance.dir()
                              + " has entries of unknown state number " + std::to_string(state));
        entries.begin_state(capture.names[state]);
        current = state;
        open = true;
      }
      entries.add(key.substr(rocksdb_key_prefix_size), it->value().ToStringView());
    }
    if (auto appended = writer->append(entries.take()); !appended)
      return appended.error();
  }
  if (!it->status().ok())
    return instance.failure("Cannot read a snapshot of RocksDB instance", it->status());
  return writer->finish();
}

expected<std::vector<keyed_state_handle>> write_snapshot(snapshot_capture& capture,
                                                         const snapshot_target& target) {
  if (capture.failed.code != errc::none)
    return capture.failed;
  std::vector<keyed_state_handle> handles;
  if (capture.checkpoint_dir.empty() || target.checkpoint_dir.empty()
      || target.shared_dir.empty()) {
    // A full snapshot; also an incremental backend's without checkpoint storage to refer to.
    auto path = target.checkpoint_dir.empty()
      ? std::string()
      : target.checkpoint_dir + "/" + target.file_prefix + "-keyed";
    auto handle = write_full(capture, path);
    if (!handle)
      return handle.error();
    handles.push_back(std::move(*handle));
    return handles;
  }
  uploaded_ssts ssts;
  auto handle = upload_rocksdb_checkpoint(capture.checkpoint_dir, target, capture.context, ssts);
  if (!handle)
    return handle.error();
  capture.backend->ssts.uploaded(capture.context.checkpoint_id, std::move(ssts));
  handles.push_back(std::move(*handle));
  return handles;
}

[[noreturn]] void fail(const error& e) {
  throw std::runtime_error(e.message);
}

} // namespace

expected<std::unique_ptr<rocksdb_keyed_state_backend>> rocksdb_keyed_state_backend::create(
  const keyed_state_backend_options& options, key_group_range key_groups) {
  if (key_groups.first < 0 || key_groups.last > 0x7fff)
    return make_error(errc::invalid_argument,
                      "RocksDB state backend for key groups [" + std::to_string(key_groups.first)
                        + ", " + std::to_string(key_groups.last) + "]: key groups are 0 to 32767");
  auto local_dir = detail::local_path(options.local_dir);
  std::error_code ec;
  if (local_dir.empty()) {
    auto pattern = (std::filesystem::temp_directory_path(ec) / "flint-rocksdb-XXXXXX").string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr)
      return make_error(errc::internal,
                        "Cannot make a local directory for the RocksDB state backend under "
                          + std::filesystem::temp_directory_path(ec).string());
    local_dir = pattern;
  } else {
    local_dir = std::filesystem::absolute(local_dir, ec).lexically_normal().string();
    // Left by an earlier backend of the same directory that did not end cleanly.
    std::filesystem::remove_all(local_dir, ec);
    if (ec)
      return make_error(errc::internal,
                        "Cannot clear the local directory " + local_dir
                          + " of the RocksDB state backend: " + ec.message());
  }
  auto state = std::make_shared<core>();
  state->local_dir = local_dir;
  state->instance_id = random_instance_id();
  if (auto made = detail::make_directories(local_dir, "RocksDB state backend directory"); !made)
    return made.error();
  auto instance = rocksdb_instance::open(instance_dir_of(local_dir), false, options.rocksdb);
  if (!instance)
    return instance.error();
  state->instance = std::move(*instance);
  auto backend = std::unique_ptr<rocksdb_keyed_state_backend>(
    new rocksdb_keyed_state_backend(std::move(state), key_groups, options));
  // As Flink's EmbeddedRocksDBStateBackend logs its options: which settings the instance really
  // has (RocksDB's own report), so a job's state.backend.rocksdb.* can be seen to take effect.
  std::string line = "Using RocksDB options for " + backend->instance_dir()
    + ": predefined-options " + options.rocksdb.predefined_options + ", cache.size "
    + std::to_string(options.rocksdb.cache_bytes) + " bytes";
  for (const auto& [name, value] : backend->rocksdb_settings())
    line += ", " + name + "=" + value;
  make_endpoint_logger("rocksdb_state_backend")->info(line);
  return backend;
}

rocksdb_keyed_state_backend::rocksdb_keyed_state_backend(std::shared_ptr<core> state,
                                                         key_group_range key_groups,
                                                         const keyed_state_backend_options& options)
  : core_(std::move(state)),
    key_groups_(key_groups),
    incremental_(options.incremental),
    rocksdb_options_(options.rocksdb) {
  if (options.rocksdb.cache_bytes > 0)
    cache_ = std::make_unique<rocksdb_write_cache>(options.rocksdb.cache_bytes, key_groups);
}

rocksdb_keyed_state_backend::~rocksdb_keyed_state_backend() = default;

std::string rocksdb_keyed_state_backend::instance_dir() const {
  return instance_dir_of(core_->local_dir);
}

const std::string& rocksdb_keyed_state_backend::entry_key(std::uint32_t state,
                                                          std::int32_t key_group,
                                                          std::string_view key) {
  // An operator's put follows its get of the same key: the key is built already.
  if (state == key_state_ && key_group == key_group_
      && key_.size() == rocksdb_key_prefix_size + key.size()
      && std::memcmp(key_.data() + rocksdb_key_prefix_size, key.data(), key.size()) == 0)
    return key_;
  if (state >= names_.size())
    throw std::out_of_range("keyed state backend: no state number " + std::to_string(state));
  if (!key_groups_.contains(key_group))
    throw std::out_of_range(
      "keyed state backend of key groups [" + std::to_string(key_groups_.first) + ", "
      + std::to_string(key_groups_.last) + "]: key group " + std::to_string(key_group));
  rocksdb_key_prefix(key_, key_group, state);
  key_.append(key);
  key_state_ = state;
  key_group_ = key_group;
  return key_;
}

std::uint32_t rocksdb_keyed_state_backend::register_state(const std::string& name) {
  if (auto it = numbers_.find(name); it != numbers_.end())
    return it->second;
  auto number = static_cast<std::uint32_t>(names_.size());
  if (auto added = core_->instance->add_state_name(number, name); !added)
    fail(added.error());
  names_.push_back(name);
  numbers_.emplace(name, number);
  return number;
}

bool rocksdb_keyed_state_backend::get(std::uint32_t state, std::int32_t key_group,
                                      std::string_view key, std::string& value) {
  auto& instance = *core_->instance;
  if (cache_) {
    auto found = cache_->get(instance, key_group, entry_key(state, key_group, key), value);
    if (!found)
      fail(found.error());
    return *found;
  }
  auto status = instance.db().Get(rocksdb::ReadOptions(), entry_key(state, key_group, key), &value);
  if (status.IsNotFound())
    return false;
  if (!status.ok())
    fail(instance.failure("Cannot read from RocksDB instance", status));
  return true;
}

void rocksdb_keyed_state_backend::put(std::uint32_t state, std::int32_t key_group,
                                      std::string_view key, std::string_view value) {
  auto& instance = *core_->instance;
  if (cache_) {
    if (auto put = cache_->put(instance, key_group, entry_key(state, key_group, key), value); !put)
      fail(put.error());
    return;
  }
  auto status =
    instance.db().Put(instance.write_options(), entry_key(state, key_group, key), value);
  if (!status.ok())
    fail(instance.failure("Cannot write to RocksDB instance", status));
}

void rocksdb_keyed_state_backend::remove(std::uint32_t state, std::int32_t key_group,
                                         std::string_view key) {
  auto& instance = *core_->instance;
  if (cache_) {
    if (auto removed = cache_->remove(instance, key_group, entry_key(state, key_group, key));
        !removed)
      fail(removed.error());
    return;
  }
  auto status = instance.db().Delete(instance.write_options(), entry_key(state, key_group, key));
  if (!status.ok())
    fail(instance.failure("Cannot write to RocksDB instance", status));
}

void rocksdb_keyed_state_backend::for_each(
  std::uint32_t state, std::int32_t key_group, std::string_view prefix,
  const std::function<void(std::string_view, std::string_view)>& f) {
  auto& instance = *core_->instance;
  // A copy: f may call get and so reuse key_.
  auto start = entry_key(state, key_group, prefix);
  // The iteration reads RocksDB: the key group's cached writes go there first.
  if (cache_)
    if (auto flushed = cache_->flush(instance, key_group); !flushed)
      fail(flushed.error());
  std::unique_ptr<rocksdb::Iterator> it(instance.db().NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(start); it->Valid(); it->Next()) {
    auto key = it->key().ToStringView();
    if (!key.starts_with(start))
      break;
    f(key.substr(rocksdb_key_prefix_size), it->value().ToStringView());
  }
  if (!it->status().ok())
    fail(instance.failure("Cannot read from RocksDB instance", it->status()));
}

keyed_snapshot_upload rocksdb_keyed_state_backend::snapshot(std::int64_t checkpoint_id) {
  snapshots_taken_ = true;
  auto capture = std::make_shared<snapshot_capture>();
  // A snapshot is what RocksDB holds: the cached writes go there first.
  if (cache_)
    if (auto flushed = cache_->flush(*core_->instance); !flushed)
      capture->failed = flushed.error();
  capture->backend = core_;
  capture->names = names_;
  capture->key_groups = key_groups_;
  auto& instance = *core_->instance;
  capture->snapshot = instance.db().GetSnapshot();
  if (incremental_) {
    auto dir = core_->local_dir + "/chk-" + std::to_string(checkpoint_id);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec); // of an earlier attempt at the same checkpoint
    rocksdb::Checkpoint* checkpoint = nullptr;
    auto status = rocksdb::Checkpoint::Create(&instance.db(), &checkpoint);
    std::unique_ptr<rocksdb::Checkpoint> owned(checkpoint);
    // The memtables are flushed first (log_size_for_flush 0): writes go without a log.
    if (status.ok())
      status = instance.db().Flush(rocksdb::FlushOptions());
    if (status.ok())
      status = checkpoint->CreateCheckpoint(dir, 0);
    if (status.ok()) {
      capture->checkpoint_dir = dir;
    } else {
      capture->failed = instance.failure(
        "Cannot make checkpoint " + std::to_string(checkpoint_id) + " of RocksDB instance", status);
      std::filesystem::remove_all(dir, ec);
    }
    capture->context.checkpoint_id = checkpoint_id;
    capture->context.key_groups = key_groups_;
    capture->context.instance_id = core_->instance_id;
    capture->context.reusable = core_->ssts.confirmed();
    capture->context.base_checkpoint_id = core_->ssts.confirmed_id();
  }
  return [capture](const snapshot_target& target) {
    auto handles = write_snapshot(*capture, target);
    capture->release();
    return handles;
  };
}

rocksdb_cache_stats rocksdb_keyed_state_backend::cache_stats() const {
  return cache_ ? cache_->stats() : rocksdb_cache_stats{};
}

std::map<std::string, std::string> rocksdb_keyed_state_backend::rocksdb_settings() const {
  auto options = core_->instance->db().GetOptions();
  std::map<std::string, std::string> out;
  out["write_buffer_size"] = std::to_string(options.write_buffer_size);
  out["compaction_style"] = std::to_string(static_cast<int>(options.compaction_style));
  out["write_buffer_manager"] =
    options.write_buffer_manager && options.write_buffer_manager->enabled()
    ? std::to_string(options.write_buffer_manager->buffer_size())
    : "none";
  out["max_open_files"] = std::to_string(options.max_open_files);
  out["max_write_buffer_number"] = std::to_string(options.max_write_buffer_number);
  if (auto* table = options.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>())
    out["block_cache_capacity"] =
      table->block_cache ? std::to_string(table->block_cache->GetCapacity()) : "none";
  return out;
}

void rocksdb_keyed_state_backend::notify_checkpoint_complete(std::int64_t checkpoint_id) {
  core_->ssts.complete(checkpoint_id);
}

expected<unit> rocksdb_keyed_state_backend::load_state_names() {
  key_state_ = no_state;
  auto names = core_->instance->state_names();
  if (!names)
    return names.error();
  names_ = std::move(*names);
  numbers_.clear();
  for (std::uint32_t i = 0; i < names_.size(); ++i)
    numbers_.emplace(names_[i], i);
  return unit{};
}

expected<unit> rocksdb_keyed_state_backend::restore(
  const std::vector<keyed_state_handle>& handles) {
  // Uploads in flight read the instance a restore would replace.
  if (snapshots_taken_)
    return make_error(errc::illegal_state,
                      "RocksDB state backend of " + instance_dir()
                        + ": restore after a snapshot (restore comes before any other call)");
  if (handles.size() == 1 && handles[0].incremental
      && handles[0].first_key_group >= key_groups_.first
      && handles[0].last_key_group <= key_groups_.last)
    return restore_instance(handles[0]);
  for (const auto& handle : handles)
    if (auto restored = restore_entries(handle); !restored)
      return restored;
  return unit{};
}

expected<unit> rocksdb_keyed_state_backend::restore_instance(const keyed_state_handle& handle) {
  // Flink's fast path: the checkpoint's files are the instance.
  if (cache_)
    cache_->clear();
  core_->instance.reset();
  auto dir = instance_dir();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  auto downloaded = download_rocksdb_checkpoint(handle, dir);
  auto instance = rocksdb_instance::open(dir, false, rocksdb_options_);
  if (!downloaded || !instance) {
    // An empty instance again, so the backend stays usable for its destructor.
    std::filesystem::remove_all(dir, ec);
    auto empty = rocksdb_instance::open(dir, false, rocksdb_options_);
    if (empty)
      core_->instance = std::move(*empty);
    return !downloaded ? downloaded.error() : instance.error();
  }
  core_->instance = std::move(*instance);
  if (auto loaded = load_state_names(); !loaded)
    return loaded;
  uploaded_ssts ssts;
  for (const auto& file : handle.shared_files)
    ssts[file.name] = file.handle;
  core_->ssts.restored(std::move(ssts));
  return unit{};
}

expected<unit> rocksdb_keyed_state_backend::restore_entries(const keyed_state_handle& handle) {
  auto& instance = *core_->instance;
  batch_writer batch(instance);
  std::string key;
  if (!handle.incremental) {
    std::optional<error> failed;
    std::optional<std::string> last_name;
    std::uint32_t last_number = 0;
    auto read = read_backend_entries(handle, key_groups_,
                                     [&](std::string_view name, std::int32_t key_group,
                                         std::string_view user_key, std::string_view value) {
                                       if (failed)
                                         return;
                                       if (!last_name || name != *last_name) {
                                         last_name.emplace(name);
                                         last_number = register_state(*last_name);
                                       }
                                       rocksdb_key_prefix(key, key_group, last_number);
                                       key.append(user_key);
                                       if (auto put = batch.put(key, value); !put)
                                         failed = put.error();
                                     });
    if (!read)
      return read;
    if (failed)
      return *failed;
    return batch.flush();
  }

  // Rescaling: the handle's instance opened aside, the entries of this backend's key groups
  // copied over.
  auto range = key_groups_.intersect({handle.first_key_group, handle.last_key_group});
  if (range.empty())
    return unit{};
  auto dir = core_->local_dir + "/restore-" + std::to_string(restores_++);
  struct remove_dir {
    std::string dir;
    ~remove_dir() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  if (auto downloaded = download_rocksdb_checkpoint(handle, dir); !downloaded)
    return downloaded;
  auto other = rocksdb_instance::open(dir, true);
  if (!other)
    return other.error();
  auto other_names = (*other)->state_names();
  if (!other_names)
    return other_names.error();
  std::vector<std::uint32_t> numbers;
  for (const auto& name : *other_names)
    numbers.push_back(register_state(name));
  rocksdb::ReadOptions read;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it((*other)->db().NewIterator(read));
  rocksdb_key_prefix(key, range.first, 0);
  for (it->Seek(key); it->Valid(); it->Next()) {
    auto other_key = it->key().ToStringView();
    if (other_key.size() < rocksdb_key_prefix_size || rocksdb_key_group(other_key) > range.last)
      break;
    auto state = rocksdb_state_number(other_key);
    if (state >= numbers.size())
      return make_error(errc::invalid_argument,
                        "RocksDB instance " + dir + " restored from "
                          + "an incremental handle has entries of unknown " + "state number "
                          + std::to_string(state));
    rocksdb_key_prefix(key, rocksdb_key_group(other_key), numbers[state]);
    key.append(other_key.substr(rocksdb_key_prefix_size));
    if (auto put = batch.put(key, it->value().ToStringView()); !put)
      return put;
  }
  if (!it->status().ok())
    return (*other)->failure("Cannot read RocksDB instance", it->status());
  return batch.flush();
}

} // namespace flint::state
