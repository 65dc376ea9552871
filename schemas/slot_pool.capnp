@0x9cd55a8a40e47d80;
# The SlotPool's protocol: its messages. The methods are declared in
# runtime/actors/slot_pool/slot_pool_gateway.hpp; flint-capnpc generates the C++ value types and
# codecs ("schemas/slot_pool.messages.hpp"). Every struct is prefixed `Sp` because all schemas
# share the C++ namespace flint::schema. offer_slots answers with job_master.capnp's
# JmOfferSlotsResponse (the JobMaster passes the SlotPool's answer on as its own).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::slot_pool");
$Flint.prefix("Sp");
$Flint.include(["runtime/actors/common/cluster_types.hpp",
                "runtime/actors/slot_pool/slot_request_id.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp"]);

using Cluster = import "cluster.capnp";

struct SpConnectToResourceManagerRequest {
  resourceManagerId @0 :Cluster.Id128 $Flint.type("cluster::resource_manager_id");
  resourceManagerAddress @1 :Text;
  # Endpoint id of the ResourceManager, resolved through the node's endpoint directory.
}

struct SpAllocateSlotRequest {
  requestId @0 :Cluster.Id128 $Flint.type("slot_pool::slot_request_id");
  profile @1 :Cluster.ResourceProfile;
  allowQueued @2 :Bool = true;
  # Wait for a slot that does not exist yet (request one from the RM) rather than fail.
}

struct SpAllocatedSlot {
  # A physical slot given to the scheduler (Flink's AllocatedSlot / LogicalSlot essentials).
  allocationId @0 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  slotIndex @1 :Int32;
  location @2 :Cluster.TaskManagerLocation;
  taskExecutorAddress @3 :Text;
  # Endpoint id of the TaskExecutor holding the slot.
}

struct SpReleaseSlotRequest {
  requestId @0 :Cluster.Id128 $Flint.type("slot_pool::slot_request_id");
  cause @1 :Text;
}

struct SpRegisterTaskManagerRequest {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
}

struct SpReleaseTaskManagerRequest {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  cause @1 :Text;
  # The job is over: free the TaskManager's slots there too. On a disconnect the JobMaster's own
  # disconnectJobManager tells the TaskExecutor, in order with the JobMaster's later messages.
  freeSlots @2 :Bool;
}

struct SpOfferSlotsRequest {
  location @0 :Cluster.TaskManagerLocation;
  taskExecutorAddress @1 :Text;
  offers @2 :List(Cluster.SlotOffer);
}

struct SpFailAllocationRequest {
  allocationId @0 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  cause @1 :Text;
}
