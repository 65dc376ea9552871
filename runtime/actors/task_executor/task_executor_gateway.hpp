#pragma once
/// The TaskExecutor's protocol (Flink's TaskExecutorGateway). Method ids 0x03xx.
///
/// Fenced per relationship (PROTOCOL.md): calls from the ResourceManager carry the
/// ResourceManagerId the TE registered with, and `fencing_scope` = `rm_scope`; calls about a job
/// carry that job's JobMasterId as the TE's job leader service knows it, with `fencing_scope` =
/// the job id (32 hex digits). A mismatch is refused like any wrong token.
/// Messages: schemas/task_executor.capnp (flint-capnpc generates their C++ types and codecs).

#include <cstdint>

#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/task_executor.messages.hpp"

namespace flint::task_executor {

/// Endpoint ids of TaskExecutors are "task_executor/<resource id suffix>".
inline constexpr const char* endpoint_prefix = "task_executor/";
/// The fencing scope of calls from the ResourceManager.
inline constexpr const char* rm_scope = "resource_manager";

// -- methods ---------------------------------------------------------------------------------------

/// The RM assigns one of this TE's slots to a job: allocate in the TaskSlotTable, start
/// watching the job's leader, register there and offer the slot. Reply: ack, or an error if the
/// slot is taken by another allocation. Fenced by ResourceManagerId (scope rm_scope).
struct request_slot {
  static constexpr std::uint32_t id = 0x0301;
  static constexpr const char* name = "request_slot";
  using request = request_slot_request;
  using response = rpc::ack;
};

/// Deploys one task into an active slot of the job. Reply: ack once the Task exists (its
/// states follow through update_task_execution_state). Fenced by JobMasterId (scope: job id).
struct submit_task {
  static constexpr std::uint32_t id = 0x0302;
  static constexpr const char* name = "submit_task";
  using request = submit_task_request;
  using response = rpc::ack;
};

/// Cancels a running task. Reply: ack. Fenced by JobMasterId (scope: job id).
struct cancel_task {
  static constexpr std::uint32_t id = 0x0303;
  static constexpr const char* name = "cancel_task";
  using request = cancel_task_request;
  using response = rpc::ack;
};

/// Frees a slot of the job (its tasks are failed first). Reply: ack. Fenced by JobMasterId.
struct free_slot {
  static constexpr std::uint32_t id = 0x0304;
  static constexpr const char* name = "free_slot";
  using request = free_slot_request;
  using response = rpc::ack;
};

/// A JobMaster asks for a heartbeat (request side of JM → TM). Fenced by JobMasterId.
struct heartbeat_from_job_manager {
  static constexpr std::uint32_t id = 0x0305;
  static constexpr const char* name = "heartbeat_from_job_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// The RM asks for a heartbeat; the TE answers with its slot report. Fenced by RM id.
struct heartbeat_from_resource_manager {
  static constexpr std::uint32_t id = 0x0306;
  static constexpr const char* name = "heartbeat_from_resource_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// The job's JobMaster is gone: its slots are freed, its tasks failed. Fenced by JobMasterId.
struct disconnect_job_manager {
  static constexpr std::uint32_t id = 0x0307;
  static constexpr const char* name = "disconnect_job_manager";
  using request = disconnect_job_manager_request;
  using response = rpc::ack;
};

/// The RM dropped this TE: it re-registers. Fenced by RM id.
struct disconnect_resource_manager {
  static constexpr std::uint32_t id = 0x0308;
  static constexpr const char* name = "disconnect_resource_manager";
  using request = disconnect_resource_manager_request;
  using response = rpc::ack;
};

/// Flink's releasePartitions: the job's consumers are done with these blocking partitions here;
/// their data and spill files go. Reply: ack (unknown partitions are no error). Fenced by
/// JobMasterId.
struct release_partitions {
  static constexpr std::uint32_t id = 0x0309;
  static constexpr const char* name = "release_partitions";
  using request = release_partitions_request;
  using response = rpc::ack;
};

/// Flink's requestTaskManagerDetailsInfo, as far as the slots go: the TE's current slot report,
/// for the REST API and `flint` (the ResourceManager gets the same report through heartbeats).
/// Reply: the report. Fenced by ResourceManagerId (scope rm_scope).
struct request_slot_report {
  static constexpr std::uint32_t id = 0x030A;
  static constexpr const char* name = "request_slot_report";
  using request = rpc::ack;
  using response = slot_report_response;
};

/// Flink's triggerCheckpoint: a source task starts checkpoint n (it snapshots, emits the barrier
/// and acknowledges to the JobMaster). Reply: ack once handed to the task; an unknown attempt is
/// not_found. Fenced by JobMasterId (scope: job id).
struct trigger_checkpoint {
  static constexpr std::uint32_t id = 0x030B;
  static constexpr const char* name = "trigger_checkpoint";
  using request = trigger_checkpoint_request;
  using response = rpc::ack;
};

/// Flink's confirmCheckpoint: checkpoint n completed; the task's operators are notified.
/// Reply: ack (an attempt that ended meanwhile is no error). Fenced by JobMasterId.
struct confirm_checkpoint {
  static constexpr std::uint32_t id = 0x030C;
  static constexpr const char* name = "confirm_checkpoint";
  using request = checkpoint_notification;
  using response = rpc::ack;
};

/// Flink's abortCheckpoint: checkpoint n will not complete; the task's operators are notified.
/// Reply: ack. Fenced by JobMasterId.
struct abort_checkpoint {
  static constexpr std::uint32_t id = 0x030D;
  static constexpr const char* name = "abort_checkpoint";
  using request = checkpoint_notification;
  using response = rpc::ack;
};

// -- the TaskManager's own files and threads (Flink's TaskExecutorGateway.requestLogList,
// requestFileUploadByName/ByType, requestThreadDump), for REST's /taskmanagers/:id/{logs,log,
// stdout,logs/:name,thread-dump}. Fenced by ResourceManagerId (scope rm_scope): the JobManager
// that leads asks. Flink uploads the file to the blob server; Flint sends it in pieces of at
// most file_chunk_max_bytes a call, which the caller asks for one after the other. --------------

/// The most a file upload call sends: 4 MiB, under Flink's default pekko.framesize (10 MiB) and
/// far under rpc.max-frame-size (128 MiB), so a large log never makes one oversized message.
inline constexpr std::int64_t file_chunk_max_bytes = 4 << 20;

/// The most a file upload call sends under `rpc.max-frame-size` = `max_frame_size`: 4 MiB, or half
/// the frame when that is smaller (the other half for the reply's envelope and names), so a node
/// set to small frames is answered in small pieces rather than refused (at least 4 kb: 2 KiB).
constexpr std::int64_t file_chunk_bytes_for(std::size_t max_frame_size) {
  auto half = static_cast<std::int64_t>(max_frame_size / 2);
  return half < file_chunk_max_bytes ? half : file_chunk_max_bytes;
}

/// Flink's requestLogList: the files directly in the TaskManager's log directory (none without
/// one). Reply: the list.
struct request_log_list {
  static constexpr std::uint32_t id = 0x030E;
  static constexpr const char* name = "request_log_list";
  using request = rpc::ack;
  using response = log_list_response;
};

/// Flink's requestFileUploadByName: a piece of one file of the log directory. A name that is not
/// a plain file name (a '/', "..") is invalid_argument; no such regular file there (a link
/// included) is not_found.
struct request_file_upload_by_name {
  static constexpr std::uint32_t id = 0x030F;
  static constexpr const char* name = "request_file_upload_by_name";
  using request = file_upload_by_name_request;
  using response = file_chunk;
};

/// Flink's requestFileUploadByType: a piece of the log file ("LOG") or of its `.out` sibling
/// ("STDOUT"). Another type is invalid_argument; a TaskManager logging to a terminal has neither
/// (not_found).
struct request_file_upload_by_type {
  static constexpr std::uint32_t id = 0x0310;
  static constexpr const char* name = "request_file_upload_by_type";
  using request = file_upload_by_type_request;
  using response = file_chunk;
};

/// Flink's requestThreadDump: the TaskManager process's threads.
struct request_thread_dump {
  static constexpr std::uint32_t id = 0x0311;
  static constexpr const char* name = "request_thread_dump";
  using request = rpc::ack;
  using response = thread_dump_response;
};

} // namespace flint::task_executor
