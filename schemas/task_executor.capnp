@0xc30569c91125bb0e;
# The TaskExecutor's protocol (runtime/actors/task_executor/task_executor_gateway.hpp).
# Codec: runtime/actors/task_executor/task_executor_codec.cpp. Every struct is prefixed `Te`
# because all schemas share the C++ namespace flint::schema.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Cluster = import "cluster.capnp";

struct TeRequestSlotRequest {
  slot @0 :Cluster.SlotId;
  jobId @1 :Cluster.Id128;
  allocationId @2 :Cluster.Id128;
  profile @3 :Cluster.ResourceProfile;
  # Endpoint id of the job's JobMaster.
  targetAddress @4 :Text;
  resourceManagerId @5 :Cluster.Id128;
}

struct TeSubmitTaskRequest {
  # A TaskDeploymentDescriptor message of job_graph.capnp, as runtime/graph/codec writes it:
  # nested as bytes so the graph's schema and codec stay the graph layer's own.
  taskDeploymentDescriptor @0 :Data;
  jobMasterId @1 :Cluster.Id128;
  # The slot the task runs in.
  allocationId @2 :Cluster.Id128;
}

struct TeCancelTaskRequest {
  jobId @0 :Cluster.Id128;
  attempt @1 :Cluster.ExecutionAttemptId;
}

struct TeFreeSlotRequest {
  jobId @0 :Cluster.Id128;
  allocationId @1 :Cluster.Id128;
  cause @2 :Text;
}

struct TeDisconnectJobManagerRequest {
  jobId @0 :Cluster.Id128;
  cause @1 :Text;
}

struct TeDisconnectResourceManagerRequest {
  cause @0 :Text;
}

struct TeReleasePartitionsRequest {
  jobId @0 :Cluster.Id128;
  partitions @1 :List(TeResultPartitionId);
}

struct TeResultPartitionId {
  resultId @0 :Cluster.Id128;
  partitionNumber @1 :Int32;
}
