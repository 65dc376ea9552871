#include "runtime/actors/slot_pool/slot_pool_gateway.hpp"

#include "runtime/actors/common/cluster_codec.hpp"
#include "schemas/codec_support.hpp"
#include "schemas/slot_pool.capnp.h"

namespace flint::rpc {

namespace {

namespace sp = slot_pool;
using cluster::wire::read;
using cluster::wire::read_id;
using cluster::wire::read_token;
using cluster::wire::write;

using wire::as_text;
using wire::small_message_words;
using wire::text;

} // namespace

std::vector<char> codec<sp::connect_to_resource_manager_request>::encode(
  const sp::connect_to_resource_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpConnectToResourceManagerRequest>();
  write(b.initResourceManagerId(), x.resource_manager_id);
  b.setResourceManagerAddress(as_text(x.resource_manager_address));
  return wire::to_bytes(message);
}

expected<sp::connect_to_resource_manager_request>
codec<sp::connect_to_resource_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpConnectToResourceManagerRequest>(
    bytes, "connect to resource manager request",
    [](schema::SpConnectToResourceManagerRequest::Reader r)
      -> expected<sp::connect_to_resource_manager_request> {
      return sp::connect_to_resource_manager_request{read_token(r.getResourceManagerId()),
                                                     text(r.getResourceManagerAddress())};
    });
}

std::vector<char> codec<sp::allocate_slot_request>::encode(const sp::allocate_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpAllocateSlotRequest>();
  write(b.initRequestId(), x.request_id);
  write(b.initProfile(), x.profile);
  b.setAllowQueued(x.allow_queued);
  return wire::to_bytes(message);
}

expected<sp::allocate_slot_request>
codec<sp::allocate_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpAllocateSlotRequest>(
    bytes, "allocate slot request",
    [](schema::SpAllocateSlotRequest::Reader r) -> expected<sp::allocate_slot_request> {
      return sp::allocate_slot_request{read_id<sp::slot_request_id>(r.getRequestId()),
                                       read(r.getProfile()), r.getAllowQueued()};
    });
}

std::vector<char> codec<sp::allocated_slot>::encode(const sp::allocated_slot& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpAllocatedSlot>();
  write(b.initAllocationId(), x.allocation_id);
  b.setSlotIndex(x.slot_index);
  write(b.initLocation(), x.location);
  b.setTaskExecutorAddress(as_text(x.task_executor_address));
  return wire::to_bytes(message);
}

expected<sp::allocated_slot> codec<sp::allocated_slot>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpAllocatedSlot>(
    bytes, "allocated slot", [](schema::SpAllocatedSlot::Reader r) -> expected<sp::allocated_slot> {
      return sp::allocated_slot{read_id<cluster::allocation_id>(r.getAllocationId()),
                                r.getSlotIndex(), read(r.getLocation()),
                                text(r.getTaskExecutorAddress())};
    });
}

std::vector<char> codec<sp::release_slot_request>::encode(const sp::release_slot_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpReleaseSlotRequest>();
  write(b.initRequestId(), x.request_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<sp::release_slot_request>
codec<sp::release_slot_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpReleaseSlotRequest>(
    bytes, "release slot request",
    [](schema::SpReleaseSlotRequest::Reader r) -> expected<sp::release_slot_request> {
      return sp::release_slot_request{read_id<sp::slot_request_id>(r.getRequestId()),
                                      text(r.getCause())};
    });
}

std::vector<char> codec<sp::register_task_manager_request>::encode(
  const sp::register_task_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  message.initRoot<schema::SpRegisterTaskManagerRequest>().setResourceId(as_text(x.resource_id));
  return wire::to_bytes(message);
}

expected<sp::register_task_manager_request>
codec<sp::register_task_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpRegisterTaskManagerRequest>(
    bytes, "slot pool register task manager request",
    [](schema::SpRegisterTaskManagerRequest::Reader r)
      -> expected<sp::register_task_manager_request> {
      return sp::register_task_manager_request{text(r.getResourceId())};
    });
}

std::vector<char> codec<sp::release_task_manager_request>::encode(
  const sp::release_task_manager_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpReleaseTaskManagerRequest>();
  b.setResourceId(as_text(x.resource_id));
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<sp::release_task_manager_request>
codec<sp::release_task_manager_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpReleaseTaskManagerRequest>(
    bytes, "release task manager request",
    [](schema::SpReleaseTaskManagerRequest::Reader r)
      -> expected<sp::release_task_manager_request> {
      return sp::release_task_manager_request{text(r.getResourceId()), text(r.getCause())};
    });
}

std::vector<char> codec<sp::offer_slots_request>::encode(const sp::offer_slots_request& x) {
  capnp::MallocMessageBuilder message(cluster::wire::offers_words(x.offers));
  auto b = message.initRoot<schema::SpOfferSlotsRequest>();
  write(b.initLocation(), x.location);
  b.setTaskExecutorAddress(as_text(x.task_executor_address));
  cluster::wire::write_offers(b.initOffers(static_cast<unsigned>(x.offers.size())), x.offers);
  return wire::to_bytes(message);
}

expected<sp::offer_slots_request>
codec<sp::offer_slots_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpOfferSlotsRequest>(
    bytes, "slot pool offer slots request",
    [](schema::SpOfferSlotsRequest::Reader r) -> expected<sp::offer_slots_request> {
      return sp::offer_slots_request{read(r.getLocation()), text(r.getTaskExecutorAddress()),
                                     cluster::wire::read_offers(r.getOffers())};
    });
}

std::vector<char> codec<sp::fail_allocation_request>::encode(const sp::fail_allocation_request& x) {
  capnp::MallocMessageBuilder message(small_message_words);
  auto b = message.initRoot<schema::SpFailAllocationRequest>();
  write(b.initAllocationId(), x.allocation_id);
  b.setCause(as_text(x.cause));
  return wire::to_bytes(message);
}

expected<sp::fail_allocation_request>
codec<sp::fail_allocation_request>::decode(std::span<const char> bytes) {
  return wire::read<schema::SpFailAllocationRequest>(
    bytes, "fail allocation request",
    [](schema::SpFailAllocationRequest::Reader r) -> expected<sp::fail_allocation_request> {
      return sp::fail_allocation_request{read_id<cluster::allocation_id>(r.getAllocationId()),
                                         text(r.getCause())};
    });
}

} // namespace flint::rpc
