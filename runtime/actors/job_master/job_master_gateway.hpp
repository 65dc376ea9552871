#pragma once
/// The JobMaster's protocol (Flink's JobMasterGateway), fenced with the JobMasterId. Method ids
/// 0x04xx. Codecs: job_master_codec.cpp (schema: schemas/job_master.capnp).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/registration/registration_response.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "runtime/graph/job_status.hpp"

namespace flint::job_master {

/// Endpoint ids of JobMasters are "job_master/<job id>".
inline constexpr const char* endpoint_prefix = "job_master/";

struct register_task_manager_request {
  std::string task_executor_address; ///< endpoint id of the TaskExecutor
  cluster::task_manager_location location;
  friend bool operator==(const register_task_manager_request&,
                         const register_task_manager_request&) = default;
};

struct task_manager_registration_success {
  cluster::resource_id job_master_resource_id;
  friend bool operator==(const task_manager_registration_success&,
                         const task_manager_registration_success&) = default;
};
using task_manager_registration_response =
  registration::registration_response<task_manager_registration_success>;

struct offer_slots_request {
  cluster::resource_id task_manager;
  std::vector<cluster::slot_offer> offers;
  friend bool operator==(const offer_slots_request&, const offer_slots_request&) = default;
};

struct offer_slots_response {
  std::vector<cluster::slot_offer> accepted;
  friend bool operator==(const offer_slots_response&, const offer_slots_response&) = default;
};

/// One entry of a job's exception history.
struct job_failure {
  /// Milliseconds since the epoch.
  std::int64_t timestamp = 0;
  /// "Map (1/2)"; empty for a failure of the whole job.
  std::string task;
  /// The TaskManager it ran on; may be empty.
  std::string location;
  std::string cause;
  friend bool operator==(const job_failure&, const job_failure&) = default;
};

/// A slot request of the job not served yet.
struct pending_slot_request {
  std::string request;
  std::int64_t age_ms = 0;
  friend bool operator==(const pending_slot_request&, const pending_slot_request&) = default;
};

struct job_status_response {
  graph::job_status status = graph::job_status::created;
  /// Newest first.
  std::vector<job_failure> failures;
  std::uint64_t restarts = 0;
  std::int32_t tasks = 0;
  std::int32_t tasks_running = 0;
  /// Physical slots the job's scheduled tasks need, and how many of them it holds.
  std::int32_t slots_needed = 0;
  std::int32_t slots_assigned = 0;
  std::vector<pending_slot_request> pending_slot_requests;
  std::int32_t registered_task_managers = 0;
  friend bool operator==(const job_status_response&, const job_status_response&) = default;
};

struct disconnect_task_manager_request {
  cluster::resource_id resource_id;
  std::string cause;
  friend bool operator==(const disconnect_task_manager_request&,
                         const disconnect_task_manager_request&) = default;
};

struct disconnect_resource_manager_request {
  cluster::resource_manager_id resource_manager_id;
  std::string cause;
  friend bool operator==(const disconnect_resource_manager_request&,
                         const disconnect_resource_manager_request&) = default;
};

struct fail_slot_request {
  cluster::resource_id task_manager;
  cluster::allocation_id allocation_id;
  std::string cause;
  friend bool operator==(const fail_slot_request&, const fail_slot_request&) = default;
};

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

} // namespace flint::job_master

namespace flint::rpc {
FLINT_DECLARE_CODEC(job_master::register_task_manager_request)
FLINT_DECLARE_CODEC(job_master::task_manager_registration_response)
FLINT_DECLARE_CODEC(job_master::offer_slots_request)
FLINT_DECLARE_CODEC(job_master::offer_slots_response)
FLINT_DECLARE_CODEC(cluster::task_execution_state)
FLINT_DECLARE_CODEC(job_master::job_status_response)
FLINT_DECLARE_CODEC(job_master::disconnect_task_manager_request)
FLINT_DECLARE_CODEC(job_master::disconnect_resource_manager_request)
FLINT_DECLARE_CODEC(job_master::fail_slot_request)
} // namespace flint::rpc
