#pragma once
/// The Dispatcher's protocol (Flink's DispatcherGateway), fenced with the DispatcherId. Method
/// ids 0x06xx. Clients (the CLI, the MiniCluster) call it. Messages: schemas/dispatcher.capnp
/// (flint-capnpc generates their C++ types and codecs; the JobGraph travels in its own schema).

#include <cstdint>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/dispatcher.messages.hpp"

namespace flint::dispatcher {

/// The endpoint id of a node's Dispatcher.
inline constexpr const char* endpoint_name = "dispatcher";

// -- methods ---------------------------------------------------------------------------------------

/// Accepts a job and starts its JobMaster. Reply: ack, or an error (a job with this id exists;
/// the graph is invalid). Fenced.
struct submit_job {
  static constexpr std::uint32_t id = 0x0601;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "submit_job";
  using request = submit_job_request;
  using response = rpc::ack;
};

/// Running and archived jobs. Fenced.
struct list_jobs {
  static constexpr std::uint32_t id = 0x0602;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "list_jobs";
  using request = rpc::ack;
  using response = job_list;
};

/// Cancels a job. Reply: ack, or errc::not_found for an unknown job id. Fenced.
struct cancel_job {
  static constexpr std::uint32_t id = 0x0603;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "cancel_job";
  using request = job_id_request;
  using response = rpc::ack;
};

/// A job's status (running or archived). errc::not_found for an unknown id. Fenced.
struct request_job_status {
  static constexpr std::uint32_t id = 0x0604;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "request_job_status";
  using request = job_id_request;
  using response = job_master::job_status_response;
};

/// Completes when the job reaches a globally terminal state. Ask with a long timeout. Fenced.
struct request_job_result {
  static constexpr std::uint32_t id = 0x0605;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "request_job_result";
  using request = job_id_request;
  using response = job_result;
};

/// Flink's triggerSavepoint / stopWithSavepoint, forwarded to the job's JobMaster: its path once
/// complete. Ask with a long timeout. errc::not_found for an unknown job. Fenced.
struct trigger_savepoint {
  static constexpr std::uint32_t id = 0x0606;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "trigger_savepoint";
  using request = trigger_savepoint_request;
  using response = job_master::savepoint_response;
};

/// Flink's triggerCheckpoint, forwarded to the job's JobMaster: the id of the checkpoint it
/// started. errc::not_found for a job that is not running. Fenced.
struct trigger_checkpoint {
  static constexpr std::uint32_t id = 0x0607;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "trigger_checkpoint";
  using request = job_id_request;
  using response = job_master::checkpoint_triggered;
};

} // namespace flint::dispatcher
