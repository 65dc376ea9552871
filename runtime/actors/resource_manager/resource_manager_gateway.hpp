#pragma once
/// The ResourceManager's protocol (Flink's ResourceManagerGateway), fenced with the
/// ResourceManagerId: every call carries the RM leader's session id. Method ids 0x02xx.
/// The messages are schemas/resource_manager.capnp; flint-capnpc generates their C++ types and
/// codecs.

#include <cstdint>

#include "runtime/actors/heartbeat/heartbeat_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/resource_manager.messages.hpp"

namespace flint::resource_manager {

/// The endpoint id of a node's ResourceManager.
inline constexpr const char* endpoint_name = "resource_manager";

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
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "request_resource_overview";
  using request = rpc::ack;
  using response = resource_overview;
};

} // namespace flint::resource_manager
