#include "runtime/state/rocksdb/rocksdb_instance.hpp"

#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

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

} // namespace

void rocksdb_key_prefix(std::string& out, std::int32_t key_group, std::uint32_t state) {
  out.clear();
  put_be(out, static_cast<std::uint16_t>(key_group), 2);
  put_be(out, state, 4);
}

std::int32_t rocksdb_key_group(std::string_view key) {
  return static_cast<std::int32_t>(get_be(key, 0, 2));
}

std::uint32_t rocksdb_state_number(std::string_view key) {
  return static_cast<std::uint32_t>(get_be(key, 2, 4));
}

expected<std::unique_ptr<rocksdb_instance>> rocksdb_instance::open(const std::string& dir,
                                                                   bool read_only) {
  rocksdb::Options options;
  options.create_if_missing = !read_only;
  // A closing backend's directory goes anyway; a checkpoint flushes for itself.
  options.avoid_flush_during_shutdown = true;
  // RocksDB's own LOG: warnings only, one file.
  options.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  options.keep_log_file_num = 1;
  // An operator's get per record often misses (a key seen for the first time): bloom filters
  // answer those without reading blocks.
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
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
