#include "runtime/state/state_backend_options.hpp"

#include "runtime/config/config_options.hpp"

namespace flint::state {

expected<keyed_state_backend_options> keyed_state_backend_options_from(
  const config::configuration& cfg) {
  namespace options = config::options;
  keyed_state_backend_options out;
  out.type = cfg.get_raw(options::state_backend_type.key).value_or("hashmap");
  if (out.type != "hashmap" && out.type != "rocksdb")
    return make_error(
      errc::invalid_argument,
      "Unknown state backend '" + out.type + "' (state.backend.type: hashmap or rocksdb)");
  if (cfg.contains(options::state_backend_incremental.key)) {
    auto incremental = cfg.get_bool(options::state_backend_incremental.key);
    if (!incremental)
      return incremental.error();
    out.incremental = *incremental;
  }
  auto& rocksdb = out.rocksdb;
  auto cache = cfg.get(options::state_backend_rocksdb_cache_size);
  if (!cache)
    return cache.error();
  rocksdb.cache_bytes = cache->bytes;
  auto managed = cfg.get(options::state_backend_rocksdb_memory_managed);
  if (!managed)
    return managed.error();
  rocksdb.memory_managed = *managed;
  auto fixed = cfg.find(options::state_backend_rocksdb_memory_fixed_per_slot);
  if (!fixed)
    return fixed.error();
  if (*fixed)
    rocksdb.managed_bytes = (*fixed)->bytes;
  // Set explicitly, these win over the predefined options; unset, the predefined ones apply.
  auto block_cache = cfg.find(options::state_backend_rocksdb_block_cache_size);
  if (!block_cache)
    return block_cache.error();
  if (*block_cache)
    rocksdb.block_cache_bytes = (*block_cache)->bytes;
  auto write_buffer = cfg.find(options::state_backend_rocksdb_writebuffer_size);
  if (!write_buffer)
    return write_buffer.error();
  if (*write_buffer)
    rocksdb.write_buffer_bytes = (*write_buffer)->bytes;
  auto compaction = cfg.find(options::state_backend_rocksdb_compaction_style);
  if (!compaction)
    return compaction.error();
  rocksdb.compaction_style = std::move(*compaction);
  auto predefined = cfg.get(options::state_backend_rocksdb_predefined_options);
  if (!predefined)
    return predefined.error();
  rocksdb.predefined_options = std::move(*predefined);
  return out;
}

} // namespace flint::state
