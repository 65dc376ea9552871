@0x9cd55a8a40e47d80;
# The SlotPool's protocol (runtime/actors/slot_pool/slot_pool_gateway.hpp). Codec:
# runtime/actors/slot_pool/slot_pool_codec.cpp. Every struct is prefixed `Sp` because all schemas
# share the C++ namespace flint::schema. offer_slots answers with job_master.capnp's
# JmOfferSlotsResponse (the JobMaster passes the SlotPool's answer on as its own).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Cluster = import "cluster.capnp";

struct SpConnectToResourceManagerRequest {
  resourceManagerId @0 :Cluster.Id128;
  # Endpoint id of the ResourceManager.
  resourceManagerAddress @1 :Text;
}

struct SpAllocateSlotRequest {
  requestId @0 :Cluster.Id128;
  profile @1 :Cluster.ResourceProfile;
  # Wait for a slot that does not exist yet rather than fail.
  allowQueued @2 :Bool = true;
}

struct SpAllocatedSlot {
  allocationId @0 :Cluster.Id128;
  slotIndex @1 :Int32;
  location @2 :Cluster.TaskManagerLocation;
  # Endpoint id of the TaskExecutor holding the slot.
  taskExecutorAddress @3 :Text;
}

struct SpReleaseSlotRequest {
  requestId @0 :Cluster.Id128;
  cause @1 :Text;
}

struct SpRegisterTaskManagerRequest {
  resourceId @0 :Text;
}

struct SpReleaseTaskManagerRequest {
  resourceId @0 :Text;
  cause @1 :Text;
}

struct SpOfferSlotsRequest {
  location @0 :Cluster.TaskManagerLocation;
  taskExecutorAddress @1 :Text;
  offers @2 :List(Cluster.SlotOffer);
}

struct SpFailAllocationRequest {
  allocationId @0 :Cluster.Id128;
  cause @1 :Text;
}
