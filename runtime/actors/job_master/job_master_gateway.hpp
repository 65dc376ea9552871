#pragma once
/// The JobMaster's protocol (Flink's JobMasterGateway), fenced with the JobMasterId. Method ids
/// 0x04xx. Messages: schemas/job_master.capnp (flint-capnpc generates their C++ types and
/// codecs).

#include <cstdint>

#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/job_master.messages.hpp"

namespace flint::job_master {

/// Endpoint ids of JobMasters are "job_master/<job id>".
inline constexpr const char* endpoint_prefix = "job_master/";

// -- methods ---------------------------------------------------------------------------------------

/// A TaskExecutor that holds slots for this job registers. Reply: success or decline. Fenced.
struct register_task_manager {
  static constexpr std::uint32_t id = 0x0401;
  static constexpr const char* name = "register_task_manager";
  using request = register_task_manager_request;
  using response = task_manager_registration_response;
};

/// A registered TE offers its reserved slots; reply: the offers accepted (matched by
/// allocation id in the SlotPool). Fenced.
struct offer_slots {
  static constexpr std::uint32_t id = 0x0402;
  static constexpr const char* name = "offer_slots";
  using request = offer_slots_request;
  using response = offer_slots_response;
};

/// A task changed state. Reply: ack, or an error if the attempt is unknown. Fenced.
struct update_task_execution_state {
  static constexpr std::uint32_t id = 0x0403;
  static constexpr const char* name = "update_task_execution_state";
  using request = cluster::task_execution_state;
  using response = rpc::ack;
};

/// Cancels the job. Reply: ack once cancelling started. Fenced.
struct cancel {
  static constexpr std::uint32_t id = 0x0404;
  static constexpr const char* name = "cancel";
  using request = rpc::ack;
  using response = rpc::ack;
};

/// The job's current status. Fenced.
struct request_job_status {
  static constexpr std::uint32_t id = 0x0405;
  static constexpr const char* name = "request_job_status";
  using request = rpc::ack;
  using response = job_status_response;
};

/// A TE's answer to the JM's heartbeat request. Fenced.
struct heartbeat_from_task_manager {
  static constexpr std::uint32_t id = 0x0406;
  static constexpr const char* name = "heartbeat_from_task_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// The RM asks for a heartbeat. Unfenced: the RM does not hold the JobMasterId (as in Flink).
struct heartbeat_from_resource_manager {
  static constexpr std::uint32_t id = 0x0407;
  static constexpr const char* name = "heartbeat_from_resource_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// A TE leaves; its slots are failed. Reply: ack. Fenced.
struct disconnect_task_manager {
  static constexpr std::uint32_t id = 0x0408;
  static constexpr const char* name = "disconnect_task_manager";
  using request = disconnect_task_manager_request;
  using response = rpc::ack;
};

/// The RM dropped this JM: it reconnects. Fenced.
struct disconnect_resource_manager {
  static constexpr std::uint32_t id = 0x0409;
  static constexpr const char* name = "disconnect_resource_manager";
  using request = disconnect_resource_manager_request;
  using response = rpc::ack;
};

/// A TE reports a slot failed. Fenced.
struct fail_slot {
  static constexpr std::uint32_t id = 0x040A;
  static constexpr const char* name = "fail_slot";
  using request = fail_slot_request;
  using response = rpc::ack;
};

/// Flink's acknowledgeCheckpoint, from the TaskExecutor of the task. Tell. Fenced.
struct acknowledge_checkpoint {
  static constexpr std::uint32_t id = 0x040B;
  static constexpr const char* name = "acknowledge_checkpoint";
  using request = acknowledge_checkpoint_request;
  using response = rpc::ack;
};

/// Flink's declineCheckpoint, from the TaskExecutor of the task. Tell. Fenced.
struct decline_checkpoint {
  static constexpr std::uint32_t id = 0x040C;
  static constexpr const char* name = "decline_checkpoint";
  using request = decline_checkpoint_request;
  using response = rpc::ack;
};

/// Flink's triggerSavepoint / stopWithSavepoint: answers with the savepoint's path once it
/// completed (ask with a long timeout), or why it failed. From the Dispatcher. Fenced.
struct trigger_savepoint {
  static constexpr std::uint32_t id = 0x040D;
  static constexpr const char* name = "trigger_savepoint";
  using request = trigger_savepoint_request;
  using response = savepoint_response;
};

/// A task's last I/O figures, sent by its TaskExecutor as the task ends, before its final state
/// (running tasks' figures come with the heartbeats). Tell. Fenced.
struct report_task_io {
  static constexpr std::uint32_t id = 0x040E;
  static constexpr const char* name = "report_task_io";
  using request = task_io_report;
  using response = rpc::ack;
};

/// Flink's triggerCheckpoint (REST's POST /jobs/:id/checkpoints): starts a checkpoint of the
/// configured type now and answers with its id once triggered; how it ends shows in the job's
/// status (checkpoint_history). errc::illegal_state while the job is not running, errc::rejected
/// when it cannot start (not all tasks running). From the Dispatcher. Fenced.
struct trigger_checkpoint {
  static constexpr std::uint32_t id = 0x040F;
  static constexpr const char* name = "trigger_checkpoint";
  using request = rpc::ack;
  using response = checkpoint_triggered;
};

} // namespace flint::job_master
