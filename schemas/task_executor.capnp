@0xc30569c91125bb0e;
# The TaskExecutor's protocol: its messages. The methods are declared in
# runtime/actors/task_executor/task_executor_gateway.hpp; flint-capnpc generates the C++ value
# types and codecs ("schemas/task_executor.messages.hpp"). Every struct is prefixed `Te` because
# all schemas share the C++ namespace flint::schema.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::task_executor");
$Flint.prefix("Te");
$Flint.include(["runtime/actors/common/cluster_types.hpp",
                "runtime/graph/intermediate_result_partition.hpp",
                "runtime/graph/task_deployment_descriptor.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp",
                     "runtime/actors/common/graph_payloads.hpp"]);

using Cluster = import "cluster.capnp";

struct TeRequestSlotRequest {
  slot @0 :Cluster.SlotId;
  jobId @1 :Cluster.Id128 $Flint.type("graph::job_id");
  allocationId @2 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  profile @3 :Cluster.ResourceProfile;
  targetAddress @4 :Text;
  # Endpoint id of the job's JobMaster.
  resourceManagerId @5 :Cluster.Id128 $Flint.type("cluster::resource_manager_id");
}

struct TeSubmitTaskRequest {
  taskDeploymentDescriptor @0 :Data
    $Flint.type("graph::task_deployment_descriptor") $Flint.name("tdd");
  # A TaskDeploymentDescriptor message of job_graph.capnp, as runtime/graph/codec writes it:
  # nested as bytes so the graph's schema and codec stay the graph layer's own.
  jobMasterId @1 :Cluster.Id128 $Flint.type("cluster::job_master_id");
  allocationId @2 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  # The slot the task runs in.
}

struct TeCancelTaskRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  attempt @1 :Cluster.ExecutionAttemptId;
}

struct TeFreeSlotRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  allocationId @1 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  cause @2 :Text;
}

struct TeDisconnectJobManagerRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  cause @1 :Text;
}

struct TeDisconnectResourceManagerRequest {
  cause @0 :Text;
}

struct TeReleasePartitionsRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  partitions @1 :List(Cluster.ResultPartitionId);
}

struct TeSlotReportResponse {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  # The TaskExecutor that answered.
  report @1 :Cluster.SlotReport;
  # Each of its slots, free or allocated (with allocation and job).
}

struct TeTriggerCheckpointRequest {
  # The JobMaster starts a checkpoint at a source task (Flink's triggerCheckpoint).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  attempt @1 :Cluster.ExecutionAttemptId;
  checkpointId @2 :Int64;
  timestamp @3 :Int64;
  # When the coordinator triggered it (ms on the JobMaster's clock).
  stop @4 :Bool;
  # A stop-with-savepoint: the source ends its input right after the barrier.
  drain @5 :Bool;
  # With stop: the source emits the maximum watermark before the barrier (Flink's --drain).
}

struct TeCheckpointNotification {
  # A checkpoint completed or was aborted (Flink's confirmCheckpoint / abortCheckpoint).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  attempt @1 :Cluster.ExecutionAttemptId;
  checkpointId @2 :Int64;
}

struct TeLogInfo {
  # One file of the TaskManager's log directory (Flink's LogInfo).
  name @0 :Text;
  size @1 :Int64;
  mtime @2 :Int64;
  # Last modification, ms since the epoch.
}

struct TeLogListResponse {
  # Flink's requestLogList: the regular files directly in the TaskManager's log directory.
  logs @0 :List(TeLogInfo);
}

struct TeFileUploadByNameRequest {
  # A piece of a file of the log directory by its plain name (Flink's requestFileUploadByName).
  name @0 :Text;
  offset @1 :Int64;
  maxBytes @2 :Int64;
  # The TaskExecutor sends at most this, and never more than its own limit per call.
}

struct TeFileUploadByTypeRequest {
  # A piece of the log file ("LOG") or of the standard output file ("STDOUT"), Flink's
  # requestFileUploadByType with its FileType.
  fileType @0 :Text;
  offset @1 :Int64;
  maxBytes @2 :Int64;
}

struct TeFileChunk {
  name @0 :Text;
  # The file's own name.
  size @1 :Int64;
  # Its size when read: a reader asks on from offset + data's length until it reaches it.
  offset @2 :Int64;
  data @3 :Data;
}

struct TeThreadInfo {
  # Flink's ThreadDumpInfo.ThreadInfo.
  threadName @0 :Text;
  stringifiedThreadInfo @1 :Text;
}

struct TeThreadDumpResponse {
  threadInfos @0 :List(TeThreadInfo);
}
