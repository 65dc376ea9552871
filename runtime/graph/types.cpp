#include "runtime/graph/types.hpp"

#include <cctype>
#include <string>

namespace flint::graph {

std::string_view to_string(chaining_strategy value) {
  switch (value) {
    case chaining_strategy::always: return "ALWAYS";
    case chaining_strategy::never: return "NEVER";
    case chaining_strategy::head: return "HEAD";
  }
  return "?";
}

std::string_view to_string(shuffle_mode value) {
  switch (value) {
    case shuffle_mode::pipelined: return "PIPELINED";
    case shuffle_mode::batch: return "BATCH";
    case shuffle_mode::undefined: return "UNDEFINED";
  }
  return "?";
}

std::string_view to_string(global_data_exchange_mode value) {
  switch (value) {
    case global_data_exchange_mode::all_edges_blocking: return "ALL_EDGES_BLOCKING";
    case global_data_exchange_mode::forward_edges_pipelined: return "FORWARD_EDGES_PIPELINED";
    case global_data_exchange_mode::pointwise_edges_pipelined: return "POINTWISE_EDGES_PIPELINED";
    case global_data_exchange_mode::all_edges_pipelined: return "ALL_EDGES_PIPELINED";
  }
  return "?";
}

std::string_view to_string(result_partition_type value) {
  switch (value) {
    case result_partition_type::blocking: return "BLOCKING";
    case result_partition_type::pipelined: return "PIPELINED";
    case result_partition_type::pipelined_bounded: return "PIPELINED_BOUNDED";
  }
  return "?";
}

std::string_view to_string(distribution_pattern value) {
  switch (value) {
    case distribution_pattern::pointwise: return "POINTWISE";
    case distribution_pattern::all_to_all: return "ALL_TO_ALL";
  }
  return "?";
}

std::string_view to_string(task_kind value) {
  switch (value) {
    case task_kind::source_stream_task:
      return "org.apache.flink.streaming.runtime.tasks.SourceStreamTask";
    case task_kind::one_input_stream_task:
      return "org.apache.flink.streaming.runtime.tasks.OneInputStreamTask";
  }
  return "?";
}

std::optional<global_data_exchange_mode> parse_global_data_exchange_mode(std::string_view text) {
  std::string upper;
  for (char c : text)
    upper.push_back(c == '-' ? '_'
                             : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  for (auto mode : {global_data_exchange_mode::all_edges_blocking,
                    global_data_exchange_mode::forward_edges_pipelined,
                    global_data_exchange_mode::pointwise_edges_pipelined,
                    global_data_exchange_mode::all_edges_pipelined})
    if (to_string(mode) == upper)
      return mode;
  return std::nullopt;
}

} // namespace flint::graph
