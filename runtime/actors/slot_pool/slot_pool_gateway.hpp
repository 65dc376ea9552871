#pragma once
/// The SlotPool's protocol (Flink 1.6's SlotPoolGateway: the SlotPool is its own endpoint),
/// fenced with its JobMaster's JobMasterId. Method ids 0x05xx. Only its JobMaster calls it.
/// Messages: schemas/slot_pool.capnp (flint-capnpc generates their C++ types and codecs).

#include <cstdint>

#include "runtime/actors/job_master/job_master_gateway.hpp"
#include "runtime/actors/rpc/method.hpp"
#include "schemas/slot_pool.messages.hpp"

namespace flint::slot_pool {

/// Endpoint ids of SlotPools are "slot_pool/<job id>".
inline constexpr const char* endpoint_prefix = "slot_pool/";

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

/// A TE is gone or the job is over: its slots are removed and their users failed (and, for a
/// job that is over, freed at the TE before the reply). Reply: ack.
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
