#pragma once
/// Small enums shared by the four graphs, with Flink's names.

#include <cstdint>
#include <optional>
#include <string_view>

namespace flint::graph {

/// How a task takes part in checkpoints (Flink's CheckpointingMode, as the task sees it).
enum class checkpointing_mode : std::uint8_t { none = 0, exactly_once = 1, at_least_once = 2 };

/// How an operator may be chained to its neighbours (Flink's ChainingStrategy).
enum class chaining_strategy : std::uint8_t {
  /// Chains with its predecessor and successors (map, filter, sinks...).
  always,
  /// Never chains in either direction (`disable_chaining()`).
  never,
  /// Starts a chain: may chain with successors, never with its predecessor (sources,
  /// `start_new_chain()`).
  head,
};

/// How records of one StreamEdge are exchanged (Flink's ShuffleMode).
enum class shuffle_mode : std::uint8_t {
  /// Producer and consumer run at the same time.
  pipelined,
  /// The producer finishes before the consumer starts.
  batch,
  /// The global data exchange mode decides.
  undefined,
};

/// Which edges are pipelined when a StreamEdge leaves the choice open (Flink's
/// GlobalDataExchangeMode).
enum class global_data_exchange_mode : std::uint8_t {
  all_edges_blocking,
  forward_edges_pipelined,
  pointwise_edges_pipelined,
  all_edges_pipelined,
};

/// How a produced IntermediateResultPartition behaves (Flink's ResultPartitionType, the three
/// kinds the JobGraph generator uses).
enum class result_partition_type : std::uint8_t {
  blocking,
  pipelined,
  pipelined_bounded,
};

/// How producer subtasks connect to consumer subtasks of one JobEdge.
enum class distribution_pattern : std::uint8_t {
  /// Each producer connects to one or a few consumers (FORWARD, RESCALE).
  pointwise,
  /// Every producer connects to every consumer.
  all_to_all,
};

/// The invokable a JobVertex runs (Flink's SourceStreamTask / OneInputStreamTask).
enum class task_kind : std::uint8_t {
  source_stream_task,
  one_input_stream_task,
};

/// "ALWAYS", "NEVER", "HEAD".
std::string_view to_string(chaining_strategy value);
/// "PIPELINED", "BATCH", "UNDEFINED".
std::string_view to_string(shuffle_mode value);
/// "ALL_EDGES_BLOCKING", ...
std::string_view to_string(global_data_exchange_mode value);
/// Flink's enum name: "BLOCKING", "PIPELINED", "PIPELINED_BOUNDED". The JSON plan lower-cases it.
std::string_view to_string(result_partition_type value);
/// "POINTWISE", "ALL_TO_ALL".
std::string_view to_string(distribution_pattern value);
/// Flink's class name, e.g. "org.apache.flink.streaming.runtime.tasks.SourceStreamTask".
std::string_view to_string(task_kind value);

/// Parses `to_string(global_data_exchange_mode)`, case-insensitively.
std::optional<global_data_exchange_mode> parse_global_data_exchange_mode(std::string_view text);

/// True unless the type is BLOCKING: only pipelined results tie producer and consumer into one
/// pipelined region.
inline bool is_pipelined(result_partition_type type) {
  return type != result_partition_type::blocking;
}

} // namespace flint::graph
