#include "runtime/state/keyed_state_backend.hpp"

#include "runtime/state/heap_keyed_state_backend.hpp"
#include "runtime/state/rocksdb/rocksdb_keyed_state_backend.hpp"

namespace flint::state {

expected<std::unique_ptr<keyed_state_backend>> make_keyed_state_backend(
  const keyed_state_backend_options& options, key_group_range key_groups) {
  if (options.type == "hashmap")
    return std::unique_ptr<keyed_state_backend>(
      std::make_unique<heap_keyed_state_backend>(key_groups));
  if (options.type == "rocksdb") {
    auto backend = rocksdb_keyed_state_backend::create(options, key_groups);
    if (!backend)
      return backend.error();
    return std::unique_ptr<keyed_state_backend>(std::move(*backend));
  }
  return make_error(
    errc::invalid_argument,
    "Unknown state backend '" + options.type + "' (state.backend.type: hashmap or rocksdb)");
}

} // namespace flint::state
