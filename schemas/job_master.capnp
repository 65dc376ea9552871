@0x9eb418cc8cf236ad;
# The JobMaster's protocol: its messages. The methods are declared in
# runtime/actors/job_master/job_master_gateway.hpp; flint-capnpc generates the C++ value types and
# codecs ("schemas/job_master.messages.hpp"). Every struct is prefixed `Jm` because all schemas
# share the C++ namespace flint::schema. update_task_execution_state carries
# Cluster.TaskExecutionState as its root, as Flink's call carries a bare TaskExecutionState.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::job_master");
$Flint.prefix("Jm");
$Flint.include(["runtime/actors/common/cluster_types.hpp",
                "runtime/actors/registration/registration_response.hpp",
                "runtime/graph/job_status.hpp",
                "runtime/state/state_handles.hpp",
                "schemas/cluster.messages.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp",
                     "runtime/actors/common/graph_payloads.hpp"]);

using Cluster = import "cluster.capnp";

struct JmRegisterTaskManagerRequest {
  taskExecutorAddress @0 :Text;
  # Endpoint id of the TaskExecutor.
  location @1 :Cluster.TaskManagerLocation;
}

struct JmTaskManagerRegistrationSuccess {
  jobMasterResourceId @0 :Text $Flint.type("cluster::resource_id");
}

struct JmTaskManagerRegistrationResponse {
  union {
    success @0 :JmTaskManagerRegistrationSuccess;
    decline @1 :Cluster.Decline;
  }
}

struct JmOfferSlotsRequest {
  taskManager @0 :Text $Flint.type("cluster::resource_id");
  offers @1 :List(Cluster.SlotOffer);
}

struct JmOfferSlotsResponse {
  accepted @0 :List(Cluster.SlotOffer);
}

struct JmJobStatusResponse {
  status @0 :UInt8 $Flint.type("graph::job_status") $Flint.init("graph::job_status::created");
  # Sent as its number; a number past the enum is refused on decode.
  failures @1 :List(JmJobFailure);
  # The exception history, newest first.
  restarts @2 :UInt64;
  # The restarts so far.
  tasks @3 :Int32;
  # Why a job is not all running: its tasks, how many run, the physical slots the scheduled
  # tasks need and how many of them the job holds, and the slot requests still waiting.
  tasksRunning @4 :Int32;
  slotsNeeded @5 :Int32;
  slotsAssigned @6 :Int32;
  pendingSlotRequests @7 :List(JmPendingSlotRequest);
  registeredTaskManagers @8 :Int32;
  checkpoints @9 :JmCheckpointCounts;
  # The figures of Flink's /jobs/:id/checkpoints; unset when the job does not checkpoint.
  checkpointing @10 :Bool;
  plan @11 :Text;
  # Flink's JSON plan of the job's graph (what REST's /jobs/:id/plan serves); compact.
  vertices @12 :List(JmVertexStatus);
  # The job's vertices in topological order with their subtasks (REST's vertex details).
  jobType @13 :Text;
  # Flink's JobType: "BATCH" when its edges are blocking (what execution.runtime-mode: BATCH
  # sets), else "STREAMING".
  maxParallelism @14 :Int32 = -1;
  # The job's pipeline.max-parallelism; -1 when unset.
  jobConfiguration @15 :List(JmConfigEntry);
  # The job's own settings, in Flink's keys (REST's /jobs/:id/config).
  checkpointConfig @16 :JmCheckpointConfig;
  # Set with `checkpointing`.
  checkpointHistory @17 :List(JmCheckpointEntry);
  # The newest checkpoints and savepoints, oldest first (Flink's CheckpointStatsTracker history,
  # web.checkpoints.history of them).
  restored @18 :JmRestoredCheckpoint;
  # What the job started from; id -1: nothing.
}

struct JmConfigEntry {
  key @0 :Text;
  value @1 :Text;
}

struct JmCheckpointConfig {
  # Flink's CheckpointConfigInfo essentials.
  intervalMs @0 :Int64;
  timeoutMs @1 :Int64;
  minPauseMs @2 :Int64;
  maxConcurrent @3 :Int32;
  mode @4 :Text;
  # "EXACTLY_ONCE" or "AT_LEAST_ONCE".
  tolerableFailures @5 :Int32;
  retention @6 :Text;
  # "NO_EXTERNALIZED_CHECKPOINTS", "DELETE_ON_CANCELLATION" or "RETAIN_ON_CANCELLATION".
  stateBackend @7 :Text;
  checkpointStorage @8 :Text;
  # Where checkpoints go: a directory, or "JobManager" (memory only).
}

struct JmCheckpointEntry {
  # One checkpoint or savepoint as the coordinator saw it (Flink's AbstractCheckpointStats).
  id @0 :Int64;
  status @1 :Text;
  # "IN_PROGRESS", "COMPLETED" or "FAILED".
  savepoint @2 :Bool;
  triggerTime @3 :Int64;
  endTime @4 :Int64 = -1;
  # When it completed or failed (ms since the epoch); -1 while in progress.
  stateBytes @5 :UInt64;
  externalPath @6 :Text;
  failureMessage @7 :Text;
  tasks @8 :List(JmCheckpointTask);
  # Every subtask that takes part, acknowledged or not.
  stop @9 :Bool;
  # A stop-with-savepoint (Flink's SYNC_SAVEPOINT).
}

struct JmCheckpointTask {
  vertex @0 :Text;
  # The JobVertexID in hex.
  subtask @1 :Int32;
  ackTime @2 :Int64 = -1;
  # When it acknowledged; -1: not yet.
  stateBytes @3 :UInt64;
  metrics @4 :JmCheckpointMetrics;
  # What it measured, sent with its acknowledgement (Flink's SubtaskStateStats).
}

struct JmCheckpointMetrics {
  # What a subtask measured of its part in one checkpoint (Flink's CheckpointMetrics; the values
  # are state::checkpoint_metrics). -1: not measured, as from a sender that does not measure.
  bytesProcessedDuringAlignment @0 :Int64 = -1;
  bytesPersistedDuringAlignment @1 :Int64 = -1;
  alignmentDurationNanos @2 :Int64 = -1;
  # Flink's checkpointAlignmentTime: first barrier to last; 0 where nothing aligns.
  syncDurationMillis @3 :Int64 = -1;
  asyncDurationMillis @4 :Int64 = -1;
  checkpointStartDelayNanos @5 :Int64 = -1;
  # From the checkpoint's trigger (its barrier's timestamp) to the subtask's first barrier.
}

struct JmRestoredCheckpoint {
  id @0 :Int64 = -1;
  restoreTime @1 :Int64;
  savepoint @2 :Bool;
  externalPath @3 :Text;
}

struct JmVertexStatus {
  # One JobVertex at run time (Flink's ExecutionJobVertex as REST shows it).
  id @0 :Text;
  # The JobVertexID in hex.
  name @1 :Text;
  parallelism @2 :Int32;
  maxParallelism @3 :Int32;
  subtasks @4 :List(JmSubtaskStatus);
}

struct JmSubtaskStatus {
  # The current attempt of one subtask.
  subtask @0 :Int32;
  attempt @1 :Int32;
  status @2 :UInt8 $Flint.type("graph::execution_state") $Flint.init("graph::execution_state::created");
  # Sent as its number; a number past the enum is refused on decode.
  taskManager @3 :Text;
  # The resource id of the TaskManager its slot is on; empty before it has a slot.
  host @4 :Text;
  io @5 :JmTaskIo;
  # Its I/O and time figures as its TaskExecutor last reported them.
  ioFinal @6 :Bool;
  # Whether they are the attempt's final figures (sent as it ended).
  startTime @7 :Int64 = -1;
  endTime @8 :Int64 = -1;
  # When the attempt went DEPLOYING and when it ended, ms since the epoch (-1: not yet).
}

struct JmTaskIo {
  # A task's figures (Flink's IOMetrics with its TimerGauges), from its TaskExecutor: with each
  # heartbeat for the running tasks, once more as a task ends.
  attempt @0 :Cluster.ExecutionAttemptId;
  recordsIn @1 :Int64;
  recordsOut @2 :Int64;
  bytesInLocal @3 :Int64;
  bytesInRemote @4 :Int64;
  bytesOut @5 :Int64;
  buffersOut @6 :Int64;
  busyMsPerSecond @7 :Float64;
  idleMsPerSecond @8 :Float64;
  backPressuredMsPerSecond @9 :Float64;
  accumulatedBusyMs @10 :Int64;
  accumulatedIdleMs @11 :Int64;
  accumulatedBackPressuredMs @12 :Int64;
  inputWatermark @13 :Int64 = -9223372036854775808;
  outputWatermark @14 :Int64 = -9223372036854775808;
  # Flink's currentInputWatermark / currentOutputWatermark (Long.MIN_VALUE: none yet).
  lateRecordsDropped @15 :Int64;
  inputIdle @16 :Bool;
  # Every input channel is idle (its watermark status).
  watermarkHeldBackBy @17 :Text;
  # The input channel holding the input watermark back, as "channel g/c from <task> (n/N) at W".
  checkpointAlignmentTime @18 :Int64;
  checkpointStartDelayNanos @19 :Int64;
  # Flink's gauges of the last checkpoint (ns; 0 before any).
}

struct JmTaskIoReport {
  # The heartbeat payload a TaskExecutor sends its JobMaster, and report_task_io's request.
  tasks @0 :List(JmTaskIo);
  final @1 :Bool;
  # The tasks ended: these are their last figures.
  deployedExecutions @2 :List(Cluster.ExecutionAttemptId);
  # Flink's ExecutionDeploymentReport: every execution of the job the TaskExecutor holds now.
  reportsDeployments @3 :Bool;
  # Set in heartbeat payloads, where deployedExecutions is complete and the JobMaster reconciles
  # it with the executions it expects there (Flink's ExecutionDeploymentReconciler).
}

struct JmTriggerSavepointRequest {
  # Flink's triggerSavepoint / stopWithSavepoint.
  targetDirectory @0 :Text;
  # Where the savepoint-<job>-<random> directory is made; empty: state.savepoints.dir.
  stop @1 :Bool;
  # Stop with a savepoint: the sources end after its barrier and the job FINISHES.
  drain @2 :Bool;
  # With stop: the sources emit the maximum watermark before the barrier, so windows and timers
  # fire and the savepoint holds none (Flink's --drain).
}

struct JmSavepointResponse {
  path @0 :Text;
  # The savepoint's directory (its _metadata inside).
}

struct JmCheckpointCounts {
  completed @0 :Int64;
  failed @1 :Int64;
  inProgress @2 :Int64;
  latestId @3 :Int64;
  # The latest completed checkpoint (0: none yet), its duration, its state size and where it is.
  latestDurationMs @4 :Int64;
  latestStateBytes @5 :UInt64;
  latestExternalPath @6 :Text;
}

struct JmJobFailure {
  # One entry of a job's exception history.
  timestamp @0 :Int64;
  # Milliseconds since the epoch.
  task @1 :Text;
  # "Map (1/2)"; empty for a failure of the whole job.
  location @2 :Text;
  # The TaskManager it ran on; may be empty.
  cause @3 :Text;
}

struct JmPendingSlotRequest {
  # A slot request of the job not served yet.
  request @0 :Text;
  ageMs @1 :Int64;
}

struct JmDisconnectTaskManagerRequest {
  resourceId @0 :Text $Flint.type("cluster::resource_id");
  cause @1 :Text;
}

struct JmDisconnectResourceManagerRequest {
  resourceManagerId @0 :Cluster.Id128 $Flint.type("cluster::resource_manager_id");
  cause @1 :Text;
}

struct JmFailSlotRequest {
  taskManager @0 :Text $Flint.type("cluster::resource_id");
  allocationId @1 :Cluster.Id128 $Flint.type("cluster::allocation_id");
  cause @2 :Text;
}

struct JmAcknowledgeCheckpointRequest {
  # A task took its part of a checkpoint (Flink's acknowledgeCheckpoint).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  attempt @1 :Cluster.ExecutionAttemptId;
  checkpointId @2 :Int64;
  taskState @3 :Data $Flint.type("state::task_state_snapshot");
  # Its TaskStateSnapshot (runtime/state/state_codec), nested as bytes: the state layer's own
  # schema (checkpoint.capnp) and codec.
  checkpointMetrics @4 :JmCheckpointMetrics;
  # What the task measured (unset by older senders: every figure -1).
}

struct JmDeclineCheckpointRequest {
  # A task cannot take its part of a checkpoint (Flink's declineCheckpoint).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  attempt @1 :Cluster.ExecutionAttemptId;
  checkpointId @2 :Int64;
  cause @3 :Text;
  taskNotReady @4 :Bool;
  # The task was not ready or is closing (Flink's CHECKPOINT_DECLINED_TASK_NOT_READY / _CLOSING,
  # or _SUBSUMED): not counted against the tolerable failed checkpoints.
}

struct JmCheckpointTriggered {
  # trigger_checkpoint's answer: the checkpoint started (its progress is in the job's status).
  checkpointId @0 :Int64;
}
