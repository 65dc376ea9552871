#pragma once
/// One RocksDB instance in a directory, with Flint's key layout over it (private to the rocksdb
/// backend: the one header besides its sources that includes RocksDB's).
///
///     [u16 key group][u32 state number][key]  -> value      an entry (big-endian numbers)
///     "\xff\xff" "state/" [name]              -> [u32 number]   a registered state
///
/// A key group's entries are one contiguous range, sorted by state and then key; the states'
/// names come last, beyond every key group (key groups stop at 32767), and travel with the
/// instance's files, so an instance opened from a checkpoint knows its states.

#include "runtime/common/expected.hpp"
#include "runtime/state/keyed_state_backend.hpp"

#include <rocksdb/db.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace flint::state {

/// Bytes before the key: key group and state number.
inline constexpr std::size_t rocksdb_key_prefix_size = 6;

/// Writes the prefix of an entry's key into `out` (replacing what it held).
void rocksdb_key_prefix(std::string& out, std::int32_t key_group, std::uint32_t state);
/// The key group of an entry's key (at least rocksdb_key_prefix_size bytes); states' names
/// give 0xffff.
std::int32_t rocksdb_key_group(std::string_view key);
std::uint32_t rocksdb_state_number(std::string_view key);

class rocksdb_instance {
public:
  /// Opens the instance in `dir`, making it when there is none (unless `read_only`: then it
  /// only reads, as a restore reads a checkpoint's instance), with `options`' memory and table
  /// settings (an unknown compaction style or predefined options is errc::invalid_argument
  /// naming the key). Errors name the directory.
  static expected<std::unique_ptr<rocksdb_instance>> open(
    const std::string& dir, bool read_only = false, const rocksdb_backend_options& options = {});
  ~rocksdb_instance();
  rocksdb_instance(const rocksdb_instance&) = delete;
  rocksdb_instance& operator=(const rocksdb_instance&) = delete;

  rocksdb::DB& db() { return *db_; }
  const std::string& dir() const { return dir_; }
  /// Flint writes without RocksDB's write-ahead log: a checkpoint, not the log, makes state
  /// durable (as Flink's RocksDB backend).
  const rocksdb::WriteOptions& write_options() const { return write_options_; }

  /// The registered states' names by number.
  expected<std::vector<std::string>> state_names();
  /// Records `name` as state `number` in the instance.
  expected<unit> add_state_name(std::uint32_t number, const std::string& name);

  /// "<what> <dir>: <status>" as an error.
  error failure(const std::string& what, const rocksdb::Status& status) const;

private:
  rocksdb_instance(std::string dir, rocksdb::DB* db);

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;
};

} // namespace flint::state
