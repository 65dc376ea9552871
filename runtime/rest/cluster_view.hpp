#pragma once
/// What the REST handlers may ask of the cluster: the leading Dispatcher's and ResourceManager's
/// gateway methods, as blocking calls from an HTTP thread. The handlers never see endpoint state;
/// an implementation asks the endpoints (gateway_cluster_view), a test may answer itself.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/trace_server/trace_server_gateway.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_graph.hpp"

namespace flint::rest {

/// Flink's /jars/:jarid/run: an uploaded job library, run with these arguments.
struct library_run {
  std::filesystem::path library;
  std::vector<std::string> args;
  /// The job's parallelism.default; unset: the cluster's.
  std::optional<int> parallelism;
  /// Restore from this savepoint (Flink's savepointPath); empty: none.
  std::string savepoint_path;
  bool allow_non_restored_state = false;
  /// Flink's claimMode (restoreMode before 1.20).
  graph::recovery_claim_mode claim_mode = graph::recovery_claim_mode::no_claim;
  /// The job's id (Flink's jobId); unset: a fresh random one.
  std::optional<graph::job_id> job_id;
  /// Flink's flinkConfiguration: the job's own settings over the cluster's.
  std::vector<std::pair<std::string, std::string>> configuration;
  /// Flink's entryClass: the library's named entry to run (`flint run -c`); empty: its
  /// FLINT_JOB_ENTRY.
  std::string entry;
};

/// Flink's answer while no leader is known (its LeaderRetrievalHandler); what a call answers with
/// errc::unreachable on a JobManager that does not lead.
inline constexpr const char* no_leader_message =
  "Service temporarily unavailable due to an ongoing leader election. Please refresh.";

/// Which file of a TaskManager: its log or stdout file by Flink's FileType ("LOG", "STDOUT"), else
/// one of its log directory by name.
struct task_manager_file {
  std::string type;
  std::string name;
};

class cluster_view {
public:
  virtual ~cluster_view() = default;
  virtual expected<dispatcher::job_list> list_jobs() = 0;
  /// errc::not_found for a job the Dispatcher does not know.
  virtual expected<job_master::job_status_response> job_status(const graph::job_id& job) = 0;
  virtual expected<unit> cancel_job(const graph::job_id& job) = 0;
  virtual expected<resource_manager::resource_overview> resource_overview() = 0;
  /// The savepoint's path once complete; blocks as long as the savepoint takes. `drain` (with
  /// `stop`): event time runs to its end first (Flink's stop --drain).
  virtual expected<std::string> trigger_savepoint(const graph::job_id& job,
                                                  const std::string& target_directory, bool stop,
                                                  bool drain = false) = 0;
  /// Starts a checkpoint of the job now (Flink's triggerCheckpoint): its id.
  virtual expected<std::int64_t> trigger_checkpoint(const graph::job_id& job) = 0;
  /// Deletes the savepoint at `path` (Flink's disposeSavepoint): a directory holding a readable
  /// `_metadata`, or that file. errc::invalid_argument for anything else.
  virtual expected<unit> dispose_savepoint(const std::string& path) = 0;
  /// The node's trace records from a sequence number on (its trace server's fetch_trace).
  virtual expected<trace::fetch_trace_response> fetch_trace(
    const trace::fetch_trace_request& request) = 0;
  /// Builds the library's program here (its entry point runs in this process, as Flink runs a
  /// jar's main() in the JobManager), uploads library and job package to the blob server and
  /// submits the job: its id. errc::invalid_argument for a library that does not load or build.
  virtual expected<graph::job_id> run_library(const library_run& run) = 0;
  /// Builds the library's program as run_library does, without running it: Flink's JSON plan of
  /// its job graph. errc::invalid_argument as run_library.
  virtual expected<std::string> plan_library(const library_run& run) = 0;

  // A TaskManager's own files and threads, asked of the TaskExecutor at `address` (its endpoint
  // id, as the ResourceManager lists it) as the leading ResourceManager would (Flink's
  // ResourceManagerGateway.requestTaskManagerLogList and friends pass them on). Without an
  // implementation: errc::not_found.

  virtual expected<task_executor::log_list_response> task_manager_logs(const std::string& address);
  /// A piece of the file from `offset`: at most task_executor::file_chunk_max_bytes.
  virtual expected<task_executor::file_chunk> task_manager_file_chunk(
    const std::string& address, const task_manager_file& file, std::int64_t offset);
  virtual expected<task_executor::thread_dump_response> task_manager_thread_dump(
    const std::string& address);

  /// The REST URL ("http://host:port") of the leading JobManager while this one does not lead,
  /// where calls that need the leader are forwarded; nullopt while no leader is known or this
  /// node leads (and by default).
  virtual std::optional<std::string> leader_rest_url() { return std::nullopt; }
};

} // namespace flint::rest
