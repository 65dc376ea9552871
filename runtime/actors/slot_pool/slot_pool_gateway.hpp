#pragma once
/// The SlotPool's protocol (Flink 1.6's SlotPoolGateway: the SlotPool is its own endpoint),
/// fenced with its JobMaster's JobMasterId. Method ids 0x05xx. Only its JobMaster calls it.
/// Codecs: slot_pool_codec.cpp (schema: schemas/slot_pool.capnp).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/actors/common/cluster_types.hpp"
#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"

namespace flint::slot_pool {

/// Endpoint ids of SlotPools are "slot_pool/<job id>".
inline constexpr const char* endpoint_prefix = "slot_pool/";

/// Names one request for a slot (Flink's SlotRequestId).
using slot_request_id = graph::abstract_id<struct slot_request_id_tag>;

struct connect_to_resource_manager_request {
  cluster::resource_manager_id resource_manager_id;
  /// Endpoint id of the ResourceManager, resolved through the node's endpoint directory.
  std::string resource_manager_address;
  friend bool operator==(const connect_to_resource_manager_request&,
                         const connect_to_resource_manager_request&) = default;
};

struct allocate_slot_request {
  slot_request_id request_id;
  cluster::resource_profile profile;
  /// Wait for a slot that does not exist yet (request one from the RM) rather than fail.
  bool allow_queued = true;
  friend bool operator==(const allocate_slot_request&, const allocate_slot_request&) = default;
};

/// A physical slot given to the scheduler (Flink's AllocatedSlot / LogicalSlot essentials).
struct allocated_slot {
  cluster::allocation_id allocation_id;
  std::int32_t slot_index = 0;
  cluster::task_manager_location location;
  std::string task_executor_address; ///< endpoint id of the TaskExecutor holding it
  friend bool operator==(const allocated_slot&, const allocated_slot&) = default;
};

struct release_slot_request {
  slot_request_id request_id;
  std::string cause;
  friend bool operator==(const release_slot_request&, const release_slot_request&) = default;
};

struct register_task_manager_request {
  cluster::resource_id resource_id;
  friend bool operator==(const register_task_manager_request&,
                         const register_task_manager_request&) = default;
};

struct release_task_manager_request {
  cluster::resource_id resource_id;
  std::string cause;
  friend bool operator==(const release_task_manager_request&,
                         const release_task_manager_request&) = default;
};

struct offer_slots_request {
  cluster::task_manager_location location;
  std::string task_executor_address;
  std::vector<cluster::slot_offer> offers;
  friend bool operator==(const offer_slots_request&, const offer_slots_request&) = default;
};

struct fail_allocation_request {
  cluster::allocation_id allocation_id;
  std::string cause;
  friend bool operator==(const fail_allocation_request&, const fail_allocation_request&) = default;
};

// -- methods ---------------------------------------------------------------------------------------

/// The JM connected to an RM: parked slot requests are sent now. Reply: ack.
struct connect_to_resource_manager {
  static constexpr std::uint32_t id = 0x0501;
  static constexpr const char* name = "connect_to_resource_manager";
  using request = connect_to_resource_manager_request;
  using response = rpc::ack;
};

/// The RM is gone: new requests park until the next one connects. Reply: ack.
struct disconnect_resource_manager {
  static constexpr std::uint32_t id = 0x0502;
  static constexpr const char* name = "disconnect_resource_manager";
  using request = rpc::ack;
  using response = rpc::ack;
};

/// Asks for a slot; the reply comes when one is available (an idle slot, or an offer matched
/// by allocation id), or fails with errc::timeout after `slot.request.timeout`. Fenced.
struct allocate_slot {
  static constexpr std::uint32_t id = 0x0503;
  static constexpr const char* name = "allocate_slot";
  using request = allocate_slot_request;
  using response = allocated_slot;
};

/// Gives a slot back (or withdraws a pending request). Reply: ack.
struct release_slot {
  static constexpr std::uint32_t id = 0x0504;
  static constexpr const char* name = "release_slot";
  using request = release_slot_request;
  using response = rpc::ack;
};

/// A TE registered at the JM; only registered TEs' offers are accepted. Reply: ack.
struct register_task_manager {
  static constexpr std::uint32_t id = 0x0505;
  static constexpr const char* name = "register_task_manager";
  using request = register_task_manager_request;
  using response = rpc::ack;
};

/// A TE is gone: its slots are removed and their users failed. Reply: ack.
struct release_task_manager {
  static constexpr std::uint32_t id = 0x0506;
  static constexpr const char* name = "release_task_manager";
  using request = release_task_manager_request;
  using response = rpc::ack;
};

/// Slots offered by a TE; reply: those accepted.
struct offer_slots {
  static constexpr std::uint32_t id = 0x0507;
  static constexpr const char* name = "offer_slots";
  using request = offer_slots_request;
  using response = job_master::offer_slots_response;
};

/// An allocation failed at the TE or RM. Reply: ack.
struct fail_allocation {
  static constexpr std::uint32_t id = 0x0508;
  static constexpr const char* name = "fail_allocation";
  using request = fail_allocation_request;
  using response = rpc::ack;
};

/// Leadership lost: every pending request fails, slots are kept for a new leader. Reply: ack.
struct suspend {
  static constexpr std::uint32_t id = 0x0509;
  static constexpr const char* name = "suspend";
  using request = rpc::ack;
  using response = rpc::ack;
};

} // namespace flint::slot_pool

namespace flint::rpc {
FLINT_DECLARE_CODEC(slot_pool::connect_to_resource_manager_request)
FLINT_DECLARE_CODEC(slot_pool::allocate_slot_request)
FLINT_DECLARE_CODEC(slot_pool::allocated_slot)
FLINT_DECLARE_CODEC(slot_pool::release_slot_request)
FLINT_DECLARE_CODEC(slot_pool::register_task_manager_request)
FLINT_DECLARE_CODEC(slot_pool::release_task_manager_request)
FLINT_DECLARE_CODEC(slot_pool::offer_slots_request)
FLINT_DECLARE_CODEC(slot_pool::fail_allocation_request)
} // namespace flint::rpc
