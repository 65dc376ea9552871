#pragma once
/// The bodies of Flink's REST responses (field names and types as Flink's REST reference gives
/// them), built from what the gateways answer. Pure functions: no I/O, no actors.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/trace_server/trace_server_gateway.hpp"

namespace flint::rest {

/// A job as the handlers see it: the Dispatcher's line and its status report.
struct job_view {
  dispatcher::job_details details;
  job_master::job_status_response report;
};

/// `{"errors": [message]}`.
std::string errors_json(const std::string& message);
/// GET /config: the dashboard's settings.
std::string dashboard_config_json(bool web_submit, bool web_cancel,
                                  std::int64_t refresh_interval_ms);
/// GET /overview.
std::string cluster_overview_json(const dispatcher::job_list& jobs,
                                  const resource_manager::resource_overview& resources);
/// GET /jobs: ids and statuses.
std::string jobs_json(const dispatcher::job_list& jobs);
/// GET /jobs/overview.
std::string jobs_overview_json(const std::vector<job_view>& jobs, std::int64_t now_ms);
/// GET /jobs/:jobid.
std::string job_details_json(const job_view& job, std::int64_t now_ms);
/// GET /jobs/:jobid/plan.
std::string job_plan_json(const job_view& job);
/// GET /jobs/:jobid/exceptions.
std::string job_exceptions_json(const job_view& job);
/// GET /jobs/:jobid/checkpoints: counts, summary, latest, and the newest `history_size` entries
/// of the history, newest first (Flink's CheckpointingStatistics).
std::string job_checkpoints_json(const job_view& job, std::size_t history_size = 10);
/// GET /jobs/:jobid/checkpoints/config (Flink's CheckpointConfigInfo); nullopt when the job has
/// no checkpoint coordinator.
std::optional<std::string> checkpoint_config_json(const job_view& job);
/// GET /jobs/:jobid/checkpoints/details/:checkpointid; nullopt for a checkpoint not in the
/// job's history.
std::optional<std::string> checkpoint_details_json(const job_view& job, std::int64_t id);
/// GET /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid; nullopt for a
/// checkpoint not in the history or a vertex that does not take part in it.
std::optional<std::string> checkpoint_subtasks_json(const job_view& job, std::int64_t id,
                                                    const std::string& vertex_id);

/// How a job ended, for GET /jobs/:jobid/execution-result; unset while it runs.
struct job_outcome {
  graph::job_status status;
  std::int64_t net_runtime_ms = 0;
  std::string failure_cause;
};
/// GET /jobs/:jobid/execution-result: `{"status": {"id": "IN_PROGRESS"}}` while the job runs,
/// its JobResult (as Flink's JobResultSerializer writes it) once it ended.
std::string job_execution_result_json(const graph::job_id& job,
                                      const std::optional<job_outcome>& outcome);
/// GET /jobs/:jobid/config (Flink's JobConfigInfo, as its serializer writes it).
std::string job_config_json(const job_view& job);
/// GET /jobs/:jobid/metrics: the job's metrics Flint keeps — their ids, or with `get` (a
/// comma-separated list) the values of those asked that exist.
std::string job_metrics_json(const job_view& job, const std::optional<std::string>& get);
/// GET /jobs/:jobid/accumulators (Flint has no accumulators: empty lists).
std::string job_accumulators_json();
/// GET /jobs/:jobid/resource-requirements: each vertex's parallelism bounds.
std::string job_resource_requirements_json(const job_view& job);

/// GET /jobs/:jobid/vertices/:vertexid/subtasks/:subtaskindex; nullopt for a vertex or subtask
/// the job does not have.
std::optional<std::string> subtask_details_json(const job_view& job, const std::string& vertex_id,
                                                std::int32_t subtask, std::int64_t now_ms);
/// GET /jobs/:jobid/vertices/:vertexid/subtasktimes.
std::optional<std::string> subtask_times_json(const job_view& job, const std::string& vertex_id,
                                              std::int64_t now_ms);
/// GET /jobs/:jobid/vertices/:vertexid/taskmanagers: its subtasks grouped by TaskManager.
std::optional<std::string> vertex_task_managers_json(const job_view& job,
                                                     const std::string& vertex_id,
                                                     std::int64_t now_ms);
/// GET /jobs/:jobid/vertices/:vertexid/accumulators.
std::optional<std::string> vertex_accumulators_json(const job_view& job,
                                                    const std::string& vertex_id);
/// GET /jobs/:jobid/vertices/:vertexid/subtasks/accumulators.
std::optional<std::string> subtasks_accumulators_json(const job_view& job,
                                                      const std::string& vertex_id);
/// GET /jobs/:jobid/vertices/:vertexid/metrics: each subtask's figures as Flink's task metrics
/// ("<subtask>.numRecordsIn"); ids, or with `get` the values asked.
std::optional<std::string> vertex_metrics_json(const job_view& job, const std::string& vertex_id,
                                               const std::optional<std::string>& get);
/// GET /jobs/:jobid/vertices/:vertexid/subtasks/metrics: the subtasks' figures aggregated
/// (`agg`: min, max, avg, sum; all when unset), over `subtasks` (comma-separated; all when unset).
std::optional<std::string> subtasks_metrics_json(const job_view& job, const std::string& vertex_id,
                                                 const std::optional<std::string>& get,
                                                 const std::optional<std::string>& agg,
                                                 const std::optional<std::string>& subtasks);

/// GET /taskmanagers/:tmid/metrics and /jobmanager/metrics: `[{"id", "value"}]` of `metrics`,
/// all ids without `get`, else the values of those asked that exist.
std::string metric_list_json(const std::vector<std::pair<std::string, std::string>>& metrics,
                             const std::optional<std::string>& get);
/// GET /jobs/:jobid/vertices/:vertexid; nullopt for a vertex the job does not have.
std::optional<std::string> vertex_details_json(const job_view& job, const std::string& vertex_id,
                                               std::int64_t now_ms);
/// GET /jobs/:jobid/vertices/:vertexid/backpressure (Flink 1.13+: from the subtasks'
/// backPressuredTimeMsPerSecond); nullopt for a vertex the job does not have.
std::optional<std::string> vertex_backpressure_json(const job_view& job,
                                                    const std::string& vertex_id,
                                                    std::int64_t now_ms);
/// GET /taskmanagers.
std::string task_managers_json(const resource_manager::resource_overview& resources);
/// GET /taskmanagers/:tmid; nullopt for an unknown TaskManager. `jobs`: the status reports of
/// the running jobs, whose subtasks on it give its allocated slots.
std::optional<std::string> task_manager_json(const resource_manager::resource_overview& resources,
                                             const std::string& id,
                                             const std::vector<job_view>& jobs = {});
/// GET /jobmanager/config: `[{"key": ..., "value": ...}]`.
std::string key_values_json(const std::vector<std::pair<std::string, std::string>>& entries);

/// GET /trace (Flint's): the records as the trace recorder writes them (`to_json`), with where
/// the next poll goes on.
std::string trace_json(const trace::fetch_trace_response& page);

/// GET /jobs/:jobid/vertices/:vid/watermarks: `[{"id": "<subtask>.currentInputWatermark",
/// "value": "<ms>"}]` per subtask; none when the vertex is unknown.
std::optional<std::string> vertex_watermarks_json(const job_view& job, const std::string& vertex);

/// GET /jobs/:jobid/why (Flint's): why the job is not all running, from its status report, the
/// cluster's slots (when known) and the node's recent trace: pending slot requests and their age,
/// missing TaskManagers, the job's last refused calls, heartbeats of the job overdue by more than
/// twice `heartbeat_interval_ms`.
std::string job_why_json(const job_view& job,
                         const std::optional<resource_manager::resource_overview>& resources,
                         const std::vector<trace::record>& recent, std::int64_t now_ms,
                         std::int64_t heartbeat_interval_ms);

/// Flink's aggregate state of a vertex from its subtasks' states.
graph::execution_state aggregate_state(const job_master::vertex_status& vertex);

} // namespace flint::rest
