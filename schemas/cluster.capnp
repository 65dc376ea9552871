@0xd60980944506eee6;
# Value types shared by the control-plane protocols (runtime/actors/common/cluster_types.hpp).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct Id128 {
  # A 128-bit id (JobID, AllocationID, InstanceID, JobVertexID, ...); also fencing tokens.
  upper @0 :UInt64;
  lower @1 :UInt64;
}

struct ResourceProfile {
  cpuCores @0 :Float64;
  taskHeapMemoryMb @1 :Int64;
}

struct SlotId {
  owner @0 :Text;
  slotNumber @1 :Int32;
}

struct SlotStatus {
  id @0 :SlotId;
  profile @1 :ResourceProfile;
  hasAllocation @2 :Bool;
  allocation @3 :Id128;
  hasJob @4 :Bool;
  job @5 :Id128;
}

struct SlotReport {
  slots @0 :List(SlotStatus);
}

struct SlotOffer {
  allocation @0 :Id128;
  slotIndex @1 :Int32;
  profile @2 :ResourceProfile;
}

struct TaskManagerLocation {
  id @0 :Text;
  host @1 :Text;
  dataPort @2 :UInt16;
}

struct ExecutionAttemptId {
  jobVertex @0 :Id128;
  subtaskIndex @1 :Int32;
  attemptNumber @2 :Int32;
}

struct TaskExecutionState {
  job @0 :Id128;
  attempt @1 :ExecutionAttemptId;
  # graph::execution_state as its number.
  state @2 :UInt8;
  failureCause @3 :Text;
}

struct Decline {
  reason @0 :Text;
}
