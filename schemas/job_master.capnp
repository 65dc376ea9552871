@0x9eb418cc8cf236ad;
# The JobMaster's protocol (runtime/actors/job_master/job_master_gateway.hpp).
# Codec: runtime/actors/job_master/job_master_codec.cpp. Every struct is prefixed `Jm` because
# all schemas share the C++ namespace flint::schema. update_task_execution_state carries
# Cluster.TaskExecutionState as its root, as Flink's call carries a bare TaskExecutionState.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Cluster = import "cluster.capnp";

struct JmRegisterTaskManagerRequest {
  # Endpoint id of the TaskExecutor.
  taskExecutorAddress @0 :Text;
  location @1 :Cluster.TaskManagerLocation;
}

struct JmTaskManagerRegistrationSuccess {
  jobMasterResourceId @0 :Text;
}

struct JmTaskManagerRegistrationResponse {
  union {
    success @0 :JmTaskManagerRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct JmOfferSlotsRequest {
  taskManager @0 :Text;
  offers @1 :List(Cluster.SlotOffer);
}

struct JmOfferSlotsResponse {
  accepted @0 :List(Cluster.SlotOffer);
}

struct JmJobStatusResponse {
  # graph::job_status as its number; a number past the enum is refused on decode.
  status @0 :UInt8;
  # The exception history, newest first, and the restarts so far.
  failures @1 :List(JmJobFailure);
  restarts @2 :UInt64;
  # Why a job is not all running: tasks, physical slots and the requests still waiting.
  tasks @3 :Int32;
  tasksRunning @4 :Int32;
  slotsNeeded @5 :Int32;
  slotsAssigned @6 :Int32;
  pendingSlotRequests @7 :List(JmPendingSlotRequest);
  registeredTaskManagers @8 :Int32;
}

struct JmJobFailure {
  timestamp @0 :Int64;
  task @1 :Text;
  location @2 :Text;
  cause @3 :Text;
}

struct JmPendingSlotRequest {
  request @0 :Text;
  ageMs @1 :Int64;
}

struct JmDisconnectTaskManagerRequest {
  resourceId @0 :Text;
  cause @1 :Text;
}

struct JmDisconnectResourceManagerRequest {
  resourceManagerId @0 :Cluster.Id128;
  cause @1 :Text;
}

struct JmFailSlotRequest {
  taskManager @0 :Text;
  allocationId @1 :Cluster.Id128;
  cause @2 :Text;
}
