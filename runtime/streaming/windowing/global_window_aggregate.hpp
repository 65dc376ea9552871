#pragma once
/// The global phase of a two-phase keyed window aggregate (behind the LocalWindowAggregate),
/// chosen by the keyed state backend:
///
/// - hashmap: the slicing window operator (slicing_window_operator.hpp). Its slices live typed on
///   the heap between snapshots, as the heap backend's state does anyway.
/// - rocksdb: the WindowOperator with global_window_contents (one accumulator per key and window,
///   in the backend between records). One picks RocksDB for state larger than memory, which the
///   slicing operator's heap slices would not honour. Flink SQL keeps slices in the backend
///   behind a bounded in-memory buffer (RecordsWindowBuffer); Flint has no such buffer yet.
///
/// Savepoints. The window's state bytes are one phase's either way ("window-contents" with the
/// function's accumulator), so a savepoint of the RocksDB job or of a one-phase job restores under
/// either backend. A savepoint of the slicing operator (hashmap) holds slices, which the
/// WindowOperator refuses with a message naming what takes them: restore it with the hashmap
/// backend and pipeline.window.agg-phase-strategy AUTO or TWO_PHASE.

#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/windowing/slicing_window_operator.hpp"
#include "runtime/streaming/windowing/window_contents.hpp"
#include "runtime/streaming/windowing/window_operator.hpp"

#include <memory>
#include <utility>

namespace flint::streaming {

/// Whether the global phase on `backend` is the slicing window operator.
inline bool slices_window_state(const state::keyed_state_backend_options& backend) {
  return backend.type == "hashmap";
}

/// The global phase for `ctx`'s backend (see above); `make_fn()` makes the window function.
template <class K, class Contents, class Out, class MakeFn>
std::unique_ptr<stream_operator> make_global_window_aggregate(
  const window_settings<std::pair<K, typename Contents::state_type>, time_window>& settings,
  const Contents& contents, MakeFn&& make_fn, operator_context& ctx) {
  if (slices_window_state(ctx.state_backend))
    return std::make_unique<slicing_window_operator<K, Contents, Out>>(
      *sliced_windows::of(*settings.assigner), settings.allowed_lateness, contents, make_fn(), ctx,
      make_output<Out>(ctx));
  using global = global_window_contents<K, Contents>;
  using partial = std::pair<K, typename Contents::state_type>;
  return std::make_unique<window_operator<K, global, Out, time_window>>(
    settings, global(contents), make_fn(), [](const partial& p) { return p.first; }, ctx,
    make_output<Out>(ctx));
}

} // namespace flint::streaming
