#pragma once
/// Pieces the REST bodies share (rest_json.cpp, checkpoint_json.cpp, vertex_json.cpp): Flink's
/// names of states, its IOMetricsInfo, a vertex's times. Included by those files only.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/rest/rest_json.hpp"

namespace flint::rest::detail {

using json = nlohmann::ordered_json;

inline constexpr std::array<graph::execution_state, 10> execution_states = {
  graph::execution_state::created,   graph::execution_state::scheduled,
  graph::execution_state::deploying, graph::execution_state::initializing,
  graph::execution_state::running,   graph::execution_state::finished,
  graph::execution_state::canceling, graph::execution_state::canceled,
  graph::execution_state::failed,    graph::execution_state::reconciling};

std::string name(graph::execution_state s);
std::string name(graph::job_status s);
/// The TaskManager's id as REST shows it (its resource id, without the endpoint prefix).
std::string task_manager_id(const std::string& endpoint_id);
/// Flink's duration: from the start to the end, or to now while running; -1 before the start.
std::int64_t duration_between(std::int64_t start, std::int64_t end, std::int64_t now_ms);
/// A vertex's start (its first subtask's) and end (its last subtask's, once all ended).
std::pair<std::int64_t, std::int64_t> vertex_times(const job_master::vertex_status& v);
/// Flink's IOMetricsInfo of subtasks: their figures summed.
json io_metrics(const std::vector<job_master::subtask_status>& subtasks);
/// The vertex `id` of the job; null when it has none.
const job_master::vertex_status* find_vertex(const job_view& job, const std::string& id);
/// Flink's StatsSummaryDto (min, max, avg, p50 ... p999) of `values`; all 0 when empty.
json stats_summary(std::vector<std::int64_t> values);
/// Flink's SubtaskExecutionAttemptDetailsInfo of one subtask (vertex_json.cpp).
json subtask_details(const job_master::subtask_status& t, std::int64_t now_ms);
/// Flink's AggregatedTaskDetailsInfo of subtasks: their figures' and state durations'
/// statistics (vertex_json.cpp).
json aggregated(const std::vector<job_master::subtask_status>& subtasks, std::int64_t now_ms);
/// A comma-separated list's items, empty ones dropped.
std::vector<std::string> split_list(const std::string& text);

} // namespace flint::rest::detail
