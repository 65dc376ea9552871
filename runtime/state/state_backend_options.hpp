#pragma once
/// The keyed state backend's settings from a job's configuration: `state.backend.type`,
/// `state.backend.incremental` and `state.backend.rocksdb.*` (Flink's EmbeddedRocksDBStateBackend
/// reads the same keys from its configuration).

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/state/keyed_state_backend.hpp"

namespace flint::state {

/// The options `cfg` sets (defaults for the keys it does not set; local_dir stays empty). A value
/// that does not parse, or an unknown backend type, compaction style or predefined options, is
/// errc::invalid_argument naming the key.
expected<keyed_state_backend_options> keyed_state_backend_options_from(
  const config::configuration& cfg);

} // namespace flint::state
