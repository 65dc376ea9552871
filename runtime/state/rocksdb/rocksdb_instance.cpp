#include "runtime/state/rocksdb/rocksdb_instance.hpp"

#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <cctype>

namespace flint::state {

namespace {

constexpr std::string_view state_name_prefix(
  "\xff\xff"
  "state/",
  8);

void put_be(std::string& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_be(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v = (v << 8) | static_cast<std::uint8_t>(in[at + i]);
  return v;
}

std::string to_upper_ascii(std::string_view s) {
  std::string out;
  for (char c : s)
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

} // namespace

void rocksdb_key_prefix(std::string& out, std::int32_t key_group, std::uint32_t state) {
  // Once per get and put: the 6 bytes at once.
  out.resize(rocksdb_key_prefix_size);
  auto group = static_cast<std::uint16_t>(key_group);
  out[0] = static_cast<char>(group >> 8);
  out[1] = static_cast<char>(group & 0xff);
  out[2] = static_cast<char>(state >> 24);
  out[3] = static_cast<char>((state >> 16) & 0xff);
  out[4] = static_cast<char>((state >> 8) & 0xff);
  out[5] = static_cast<char>(state & 0xff);
}

std::int32_t rocksdb_key_group(std::string_view key) {
  return static_cast<std::int32_t>(get_be(key, 0, 2));
}

std::uint32_t rocksdb_state_number(std::string_view key) {
  return static_cast<std::uint32_t>(get_be(key, 2, 4));
}

static expected<rocksdb::Options> make_rocksdb_options(const rocksdb_backend_options& flint) {
  rocksdb::Options options;
  // An operator's get per record often misses (a key seen for the first time): bloom filters
  // answer those without reading blocks.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // Flink's defaults (RocksDBConfigurableOptions), then its PredefinedOptions, then the keys set.
  std::uint64_t block_cache = 8 << 20;
  std::uint64_t write_buffer = 64 << 20;
  auto compaction = rocksdb::kCompactionStyleLevel;
  auto predefined = to_upper_ascii(flint.predefined_options);
  if (predefined == "SPINNING_DISK_OPTIMIZED" || predefined == "SPINNING_DISK_OPTIMIZED_HIGH_MEM"
      || predefined == "FLASH_SSD_OPTIMIZED") {
    options.IncreaseParallelism(4);
    options.max_open_files = -1;
    options.use_fsync = false;
    if (predefined != "FLASH_SSD_OPTIMIZED")
      options.level_compaction_dynamic_level_bytes = true;
    if (predefined == "SPINNING_DISK_OPTIMIZED_HIGH_MEM") {
      block_cache = 256 << 20;
      table.block_size = 128 << 10;
      options.target_file_size_base = 256 << 20;
      options.max_bytes_for_level_base = 1 << 30;
      options.max_write_buffer_number = 4;
      options.min_write_buffer_number_to_merge = 3;
    }
  } else if (predefined != "DEFAULT") {
    return make_error(errc::invalid_argument,
                      "state.backend.rocksdb.predefined-options: '" + flint.predefined_options
                        + "' is none of DEFAULT, SPINNING_DISK_OPTIMIZED, "
                          "SPINNING_DISK_OPTIMIZED_HIGH_MEM, FLASH_SSD_OPTIMIZED");
  }
  if (flint.compaction_style) {
    auto style = to_upper_ascii(*flint.compaction_style);
    if (style == "LEVEL")
      compaction = rocksdb::kCompactionStyleLevel;
    else if (style == "UNIVERSAL")
      compaction = rocksdb::kCompactionStyleUniversal;
    else if (style == "FIFO")
      compaction = rocksdb::kCompactionStyleFIFO;
    else
      return make_error(errc::invalid_argument,
                        "state.backend.rocksdb.compaction.style: '" + *flint.compaction_style
                          + "' is none of LEVEL, UNIVERSAL, FIFO");
  }
  options.compaction_style = compaction;
  if (flint.memory_managed) {
    // As Flink's managed memory for RocksDB: one LRU cache bounds blocks and write buffers
    // together (half of it for write buffers, whose memory is charged to the cache), index
    // and filter blocks included.
    auto budget = std::max<std::uint64_t>(flint.managed_bytes, 1 << 20);
    auto cache = rocksdb::NewLRUCache(budget, -1, false, 0.1);
    options.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(budget / 2, cache);
    options.write_buffer_size = std::min<std::uint64_t>(write_buffer, budget / 4);
    table.block_cache = cache;
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
  } else {
    table.block_cache = rocksdb::NewLRUCache(flint.block_cache_bytes.value_or(block_cache));
    options.write_buffer_size = flint.write_buffer_bytes.value_or(write_buffer);
  }
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

expected<std::unique_ptr<rocksdb_instance>> rocksdb_instance::open(
  const std::string& dir, bool read_only, const rocksdb_backend_options& flint) {
  auto made = make_rocksdb_options(flint);
  if (!made)
    return made.error();
  auto options = std::move(*made);
  options.create_if_missing = !read_only;
  // A closing backend's directory goes anyway; a checkpoint flushes for itself.
  options.avoid_flush_during_shutdown = true;
  // RocksDB's own LOG: warnings only, one file.
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.keep_log_file_num = 1;
  rocksdb::DB* db = nullptr;
  auto status = read_only ? rocksdb::DB::OpenForReadOnly(options, dir, &db)
                          : rocksdb::DB::Open(options, dir, &db);
  if (!status.ok())
    return make_error(errc::internal,
                      "Cannot open RocksDB instance " + dir + ": " + status.ToString());
  return std::unique_ptr<rocksdb_instance>(new rocksdb_instance(dir, db));
}

rocksdb_instance::rocksdb_instance(std::string dir, rocksdb::DB* db)
  : dir_(std::move(dir)),
    db_(db) {
  write_options_.disableWAL = true;
}

rocksdb_instance::~rocksdb_instance() {
  if (db_)
    (void)db_->Close();
}

expected<std::vector<std::string>> rocksdb_instance::state_names() {
  std::vector<std::pair<std::uint32_t, std::string>> found;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(rocksdb::Slice(state_name_prefix.data(), state_name_prefix.size())); it->Valid();
       it->Next()) {
    auto key = it->key().ToStringView();
    if (!key.starts_with(state_name_prefix))
      break;
    auto name = std::string(key.substr(state_name_prefix.size()));
    auto value = it->value().ToStringView();
    if (value.size() != 4)
      return make_error(errc::invalid_argument,
                        "RocksDB instance " + dir_ + ": state '" + name + "' has a number of "
                          + std::to_string(value.size()) + " bytes");
    found.emplace_back(static_cast<std::uint32_t>(get_be(value, 0, 4)), std::move(name));
  }
  if (!it->status().ok())
    return failure("Cannot read the states of RocksDB instance", it->status());
  // Numbers are given in order from 0: one beyond the count is not Flint's.
  std::vector<std::string> names(found.size());
  std::vector<bool> seen(found.size());
  for (auto& [number, name] : found) {
    if (number >= names.size() || seen[number])
      return make_error(errc::invalid_argument,
                        "RocksDB instance " + dir_ + ": state '" + name + "' has number "
                          + std::to_string(number) + " of " + std::to_string(found.size()));
    seen[number] = true;
    names[number] = std::move(name);
  }
  return names;
}

expected<unit> rocksdb_instance::add_state_name(std::uint32_t number, const std::string& name) {
  std::string key(state_name_prefix);
  key += name;
  std::string value;
  put_be(value, number, 4);
  auto status = db_->Put(write_options_, key, value);
  if (!status.ok())
    return failure("Cannot register state '" + name + "' in RocksDB instance", status);
  return unit{};
}

error rocksdb_instance::failure(const std::string& what, const rocksdb::Status& status) const {
  return make_error(errc::internal, what + " " + dir_ + ": " + status.ToString());
}

} // namespace flint::state
