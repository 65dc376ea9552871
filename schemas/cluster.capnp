@0xd60980944506eee6;
# Value types shared by the control-plane protocols. They are hand-written C++ types
# (runtime/actors/common/cluster_types.hpp, converted in common/cluster_codec.cpp), so every
# struct names its C++ type; an Id128 field names its id type where it is used.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::cluster");
$Flint.include(["runtime/actors/common/cluster_types.hpp",
                "runtime/actors/registration/registration_response.hpp",
                "runtime/graph/intermediate_result_partition.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp"]);

struct Id128 $Flint.skip {
  # A 128-bit id (JobID, AllocationID, InstanceID, JobVertexID, ...); also fencing tokens.
  upper @0 :UInt64;
  lower @1 :UInt64;
}

struct ResourceProfile $Flint.type("cluster::resource_profile") {
  cpuCores @0 :Float64;
  taskHeapMemoryMb @1 :Int64;
}

struct SlotId $Flint.type("cluster::slot_id") {
  owner @0 :Text;
  slotNumber @1 :Int32;
}

struct SlotStatus $Flint.skip {
  # cluster::slot_status, converted as part of its SlotReport.
  id @0 :SlotId;
  profile @1 :ResourceProfile;
  hasAllocation @2 :Bool;
  allocation @3 :Id128;
  hasJob @4 :Bool;
  job @5 :Id128;
}

struct SlotReport $Flint.type("cluster::slot_report") {
  slots @0 :List(SlotStatus);
}

struct SlotOffer $Flint.type("cluster::slot_offer") {
  allocation @0 :Id128;
  slotIndex @1 :Int32;
  profile @2 :ResourceProfile;
}

struct TaskManagerLocation $Flint.type("cluster::task_manager_location") {
  id @0 :Text;
  host @1 :Text;
  dataPort @2 :UInt16;
}

struct ExecutionAttemptId $Flint.type("graph::execution_attempt_id") {
  jobVertex @0 :Id128;
  subtaskIndex @1 :Int32;
  attemptNumber @2 :Int32;
  executionGraph @3 :Id128;
  # graph::execution_graph_id: random per ExecutionGraph, so equal topologies never share an id.
}

struct TaskExecutionState $Flint.type("cluster::task_execution_state") {
  job @0 :Id128;
  attempt @1 :ExecutionAttemptId;
  # graph::execution_state as its number.
  state @2 :UInt8;
  failureCause @3 :Text;
}

struct Decline $Flint.type("registration::registration_decline") {
  reason @0 :Text;
}

struct ResultPartitionId $Flint.type("graph::intermediate_result_partition_id") {
  resultId @0 :Id128;
  partitionNumber @1 :Int32;
}
