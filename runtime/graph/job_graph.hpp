#pragma once
/// The second of the four graphs, and what the client submits (Flink's JobGraph).
///
/// Plain data: it compares with `==`, travels as Cap'n Proto (`codec/job_graph_codec.hpp`) and
/// holds no user code. Relations are indices into the vectors, not pointers.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/co_location_group.hpp"
#include "runtime/graph/intermediate_data_set.hpp"
#include "runtime/graph/job_edge.hpp"
#include "runtime/graph/job_vertex.hpp"
#include "runtime/graph/slot_sharing_group.hpp"
#include "runtime/graph/stream_partitioner.hpp"
#include "runtime/graph/types.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <map>
#include <string>
#include <vector>

namespace flint::graph {

/// Which vertices take part in checkpoints (§3.6).
struct checkpoint_settings {
  /// Milliseconds; -1 when checkpointing is disabled.
  std::int64_t interval = -1;
  /// Indices into `job_graph::vertices`: the input vertices.
  std::vector<std::size_t> trigger_vertices;
  /// All vertices.
  std::vector<std::size_t> ack_vertices;
  /// All vertices.
  std::vector<std::size_t> commit_vertices;

  friend bool operator==(const checkpoint_settings&, const checkpoint_settings&) = default;
};

/// Who owns a restored snapshot (Flink's RecoveryClaimMode, `flint run -claimMode`).
enum class recovery_claim_mode : std::uint8_t {
  /// The snapshot stays the user's: the job never refers to its files, changes or deletes
  /// them; its first checkpoint is a full one (the default).
  no_claim = 0,
  /// The job owns the snapshot: it is retained as the job's own checkpoints are and deleted
  /// once a newer checkpoint subsumes it.
  claim = 1,
};

/// "NO_CLAIM" or "CLAIM".
const char* to_string(recovery_claim_mode mode);
/// From Flink's spelling (case-insensitive); nullopt for anything else.
std::optional<recovery_claim_mode> parse_recovery_claim_mode(std::string_view text);

/// The savepoint or retained checkpoint a job starts from.
struct savepoint_restore_settings {
  /// A `_metadata` file or the directory holding it; empty: the job starts without state.
  std::string path;
  /// State of operators the job no longer has is skipped instead of refused.
  bool allow_non_restored_state = false;
  recovery_claim_mode claim_mode = recovery_claim_mode::no_claim;
  friend bool operator==(const savepoint_restore_settings&,
                         const savepoint_restore_settings&) = default;
};

/// Job-wide settings (§3.7).
struct job_execution_config {
  /// -1 when unset.
  int max_parallelism = -1;
  std::int64_t buffer_timeout = 100;
  bool chaining_enabled = true;
  global_data_exchange_mode exchange_mode = global_data_exchange_mode::all_edges_pipelined;
  /// The job's own settings, over the cluster's, in Flink's keys (`restart-strategy.type`,
  /// `jobmanager.execution.failover-strategy`, ...).
  std::map<std::string, std::string> job_configuration;
  /// `pipeline.auto-watermark-interval` in ms (0: periodic watermarks off). Read by the tasks
  /// from the program they rebuilt; not part of the submitted graph's encoding.
  std::int64_t auto_watermark_interval = 200;

  friend bool operator==(const job_execution_config&, const job_execution_config&) = default;
};

/// JobVertices in creation order (Flink's order: a chain is created after the chains it feeds).
/// The code a job runs as `flint run` stored it on the blob server (Flink's JobGraph carries its
/// user jars' blob keys, content hashes too): SHA-256 digests in 64 lower-case hex digits, both
/// empty for a program compiled into the runtime. The JobMaster copies them into every
/// TaskDeploymentDescriptor; a TaskExecutor loads no package and no library that hashes to
/// anything else.
struct job_code_hashes {
  /// Of the encoded job package (runtime/actors/blob/job_package.hpp) stored under the job id.
  std::string package;
  /// Of the job library: its content key on the blob server.
  std::string library;

  bool empty() const noexcept { return package.empty() && library.empty(); }
  friend bool operator==(const job_code_hashes&, const job_code_hashes&) = default;
};

struct job_graph {
  graph::job_id job_id;
  std::string name;
  std::vector<job_vertex> vertices;
  std::vector<intermediate_data_set> data_sets;
  std::vector<job_edge> edges;
  std::vector<slot_sharing_group> slot_sharing_groups;
  std::vector<co_location_group> co_location_groups;
  checkpoint_settings checkpointing;
  job_execution_config execution_config;
  /// Flink's SavepointRestoreSettings (`flint run -s PATH [--allowNonRestoredState]`).
  savepoint_restore_settings savepoint_restore;
  /// The package and library the job was uploaded with (set by api::upload_job).
  job_code_hashes code;

  /// The index of the vertex with `id`, if any.
  std::optional<std::size_t> find_vertex(const job_vertex_id& id) const;
  /// Vertex indices with every producer before its consumers, input vertices first in vertex
  /// order (Flink's getVerticesSortedTopologicallyFromSources). Fails on a cycle.
  expected<std::vector<std::size_t>> vertices_sorted_topologically() const;
  /// Checks that every index points into its vector and the relations agree both ways; a decoded
  /// graph is only used after this.
  expected<unit> validate() const;

  friend bool operator==(const job_graph&, const job_graph&) = default;
};

/// Checks that a JobGraph rebuilt from the same program (a TaskExecutor re-running the job's
/// entry point, DESIGN.md "Job code") matches the submitted one: the same vertices with the same
/// ids, names and parallelisms, and the same operators on the same StreamNode ids. The error names
/// the first difference.
expected<unit> check_same_program(const job_graph& submitted, const job_graph& rebuilt);

} // namespace flint::graph
