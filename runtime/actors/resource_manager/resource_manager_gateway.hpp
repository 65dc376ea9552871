#pragma once
/// The ResourceManager's protocol (Flink's ResourceManagerGateway), fenced with the
/// ResourceManagerId: every call carries the RM leader's session id. Method ids 0x02xx.
/// Codecs: resource_manager_codec.cpp (schema: schemas/resource_manager.capnp).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/registration/registration_response.hpp"
#include "runtime/actors/rpc/method.hpp"

namespace flint::resource_manager {

/// The endpoint id of a node's ResourceManager.
inline constexpr const char* endpoint_name = "resource_manager";

struct job_master_registration_request {
  cluster::job_master_id job_master_id;
  cluster::resource_id job_master_resource_id;
  std::string job_master_address; ///< endpoint id of the JobMaster
  graph::job_id job_id;
  friend bool operator==(const job_master_registration_request&,
                         const job_master_registration_request&) = default;
};

struct job_master_registration_success {
  cluster::resource_manager_id resource_manager_id;
  cluster::resource_id resource_manager_resource_id;
  friend bool operator==(const job_master_registration_success&,
                         const job_master_registration_success&) = default;
};
using job_master_registration_response =
  registration::registration_response<job_master_registration_success>;

/// Flink's SlotRequest: a JobMaster wants a slot for `job_id` under `allocation_id`.
struct slot_request {
  graph::job_id job_id;
  cluster::allocation_id allocation_id;
  cluster::resource_profile profile;
  std::string target_address; ///< endpoint id of the requesting JobMaster
  friend bool operator==(const slot_request&, const slot_request&) = default;
};

struct request_slot_request {
  cluster::job_master_id job_master_id;
  slot_request request;
  friend bool operator==(const request_slot_request&, const request_slot_request&) = default;
};

struct cancel_slot_request_request {
  cluster::allocation_id allocation_id;
  friend bool operator==(const cancel_slot_request_request&,
                         const cancel_slot_request_request&) = default;
};

struct task_executor_registration_request {
  std::string task_executor_address; ///< endpoint id of the TaskExecutor
  cluster::resource_id resource_id;
  std::uint16_t data_port = 0;
  std::string hardware_description;
  cluster::resource_profile default_slot_profile;
  std::int32_t number_of_slots = 0;
  friend bool operator==(const task_executor_registration_request&,
                         const task_executor_registration_request&) = default;
};

struct task_executor_registration_success {
  cluster::instance_id registration_id;
  cluster::resource_id resource_manager_resource_id;
  /// Cluster information: the RM's heartbeat interval, so the TE knows what to expect.
  std::int64_t heartbeat_interval_ms = 0;
  friend bool operator==(const task_executor_registration_success&,
                         const task_executor_registration_success&) = default;
};
using task_executor_registration_response =
  registration::registration_response<task_executor_registration_success>;

struct send_slot_report_request {
  cluster::resource_id resource_id;
  cluster::instance_id registration_id;
  cluster::slot_report report;
  friend bool operator==(const send_slot_report_request&,
                         const send_slot_report_request&) = default;
};

struct notify_slot_available_request {
  cluster::instance_id registration_id;
  cluster::slot_id slot;
  cluster::allocation_id allocation_id;
  friend bool operator==(const notify_slot_available_request&,
                         const notify_slot_available_request&) = default;
};

struct disconnect_task_manager_request {
  cluster::resource_id resource_id;
  std::string cause;
  friend bool operator==(const disconnect_task_manager_request&,
                         const disconnect_task_manager_request&) = default;
};

struct disconnect_job_manager_request {
  graph::job_id job_id;
  std::string cause;
  friend bool operator==(const disconnect_job_manager_request&,
                         const disconnect_job_manager_request&) = default;
};

/// Counts for the CLI and REST (Flink's ResourceOverview).
struct resource_overview {
  std::int32_t number_task_managers = 0;
  std::int32_t number_registered_slots = 0;
  std::int32_t number_free_slots = 0;
  std::int32_t number_pending_slot_requests = 0;
  friend bool operator==(const resource_overview&, const resource_overview&) = default;
};

// -- methods ---------------------------------------------------------------------------------------

/// A JobMaster registers for its job. Reply: success or decline. Fenced. Timeout: rpc.ask.timeout.
struct register_job_manager {
  static constexpr std::uint32_t id = 0x0201;
  static constexpr const char* name = "register_job_manager";
  using request = job_master_registration_request;
  using response = job_master_registration_response;
};

/// A JobMaster asks for a slot; the SlotManager serves it from a free slot or keeps it pending.
/// Reply: ack once accepted (not when fulfilled). Fenced.
struct request_slot {
  static constexpr std::uint32_t id = 0x0202;
  static constexpr const char* name = "request_slot";
  using request = request_slot_request;
  using response = rpc::ack;
};

/// Withdraws a pending slot request. Tell. Fenced.
struct cancel_slot_request {
  static constexpr std::uint32_t id = 0x0203;
  static constexpr const char* name = "cancel_slot_request";
  using request = cancel_slot_request_request;
  using response = rpc::ack;
};

/// A TaskExecutor registers. Reply: success (registration id) or decline. Fenced: the TE
/// carries the RM leader id it retrieved, so a stale leader refuses.
struct register_task_executor {
  static constexpr std::uint32_t id = 0x0204;
  static constexpr const char* name = "register_task_executor";
  using request = task_executor_registration_request;
  using response = task_executor_registration_response;
};

/// The TE's first full slot report after registering. Reply: ack. Fenced.
struct send_slot_report {
  static constexpr std::uint32_t id = 0x0205;
  static constexpr const char* name = "send_slot_report";
  using request = send_slot_report_request;
  using response = rpc::ack;
};

/// A TE freed a slot. Tell. Fenced.
struct notify_slot_available {
  static constexpr std::uint32_t id = 0x0206;
  static constexpr const char* name = "notify_slot_available";
  using request = notify_slot_available_request;
  using response = rpc::ack;
};

/// A TE's answer to the RM's heartbeat request; payload: its slot report (cluster.capnp
/// SlotReport bytes). Fenced.
struct heartbeat_from_task_manager {
  static constexpr std::uint32_t id = 0x0207;
  static constexpr const char* name = "heartbeat_from_task_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// A JM's answer to the RM's heartbeat request; no payload. Fenced.
struct heartbeat_from_job_manager {
  static constexpr std::uint32_t id = 0x0208;
  static constexpr const char* name = "heartbeat_from_job_manager";
  using request = heartbeat::heartbeat_request;
  using response = rpc::ack;
};

/// A TE leaves (or the JM/TE side lost it). Reply: ack. Fenced.
struct disconnect_task_manager {
  static constexpr std::uint32_t id = 0x0209;
  static constexpr const char* name = "disconnect_task_manager";
  using request = disconnect_task_manager_request;
  using response = rpc::ack;
};

/// A JM leaves; its pending requests are dropped. Reply: ack. Fenced.
struct disconnect_job_manager {
  static constexpr std::uint32_t id = 0x020A;
  static constexpr const char* name = "disconnect_job_manager";
  using request = disconnect_job_manager_request;
  using response = rpc::ack;
};

/// Counts of TaskExecutors and slots. Fenced.
struct request_resource_overview {
  static constexpr std::uint32_t id = 0x020B;
  static constexpr const char* name = "request_resource_overview";
  using request = rpc::ack;
  using response = resource_overview;
};

} // namespace flint::resource_manager

namespace flint::rpc {

FLINT_DECLARE_CODEC(resource_manager::job_master_registration_request)
FLINT_DECLARE_CODEC(resource_manager::job_master_registration_response)
FLINT_DECLARE_CODEC(resource_manager::request_slot_request)
FLINT_DECLARE_CODEC(resource_manager::cancel_slot_request_request)
FLINT_DECLARE_CODEC(resource_manager::task_executor_registration_request)
FLINT_DECLARE_CODEC(resource_manager::task_executor_registration_response)
FLINT_DECLARE_CODEC(resource_manager::send_slot_report_request)
FLINT_DECLARE_CODEC(resource_manager::notify_slot_available_request)
FLINT_DECLARE_CODEC(resource_manager::disconnect_task_manager_request)
FLINT_DECLARE_CODEC(resource_manager::disconnect_job_manager_request)
FLINT_DECLARE_CODEC(resource_manager::resource_overview)

} // namespace flint::rpc
