@0x80123185f2de198f;
# The JobGraph a client submits, and what a TaskDeploymentDescriptor needs from the
# ExecutionGraph (runtime/graph/job_graph.hpp, runtime/graph/task_deployment_descriptor.hpp).
# Relations are indices into the lists of the same message. User code never travels: the
# TaskExecutor rebuilds the program and finds each operator by its StreamNode id.
# Codec: runtime/graph/codec/job_graph_codec.cpp.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct GraphId128 {
  # A 128-bit id (JobID, JobVertexID, OperatorID, IntermediateDataSetID).
  upper @0 :UInt64;
  lower @1 :UInt64;
}

enum ResultPartitionType {
  blocking @0;
  pipelined @1;
  pipelinedBounded @2;
}

enum DistributionPattern {
  pointwise @0;
  allToAll @1;
}

enum TaskKind {
  sourceStreamTask @0;
  oneInputStreamTask @1;
}

enum PartitionerKind {
  forward @0;
  rebalance @1;
  rescale @2;
  shuffle @3;
  broadcast @4;
  global @5;
  keyGroup @6;
}

enum GlobalDataExchangeMode {
  allEdgesBlocking @0;
  forwardEdgesPipelined @1;
  pointwiseEdgesPipelined @2;
  allEdgesPipelined @3;
}

struct ChainedOperator {
  streamNodeId @0 :Int32;
  operatorId @1 :GraphId128;
  name @2 :Text;
  hasUid @3 :Bool;
  uid @4 :Text;
  kind @5 :Text;
  chainIndex @6 :Int32;
  chainedOutputs @7 :List(Int32);
  # Indices into JobGraph.edges.
  nonChainedOutputs @8 :List(UInt32);
  bufferTimeout @9 :Int64;
}

struct JobVertex {
  id @0 :GraphId128;
  name @1 :Text;
  parallelism @2 :Int32;
  maxParallelism @3 :Int32;
  invokable @4 :TaskKind;
  operators @5 :List(ChainedOperator);
  inputs @6 :List(UInt32);
  producedDataSets @7 :List(UInt32);
  slotSharingGroup @8 :UInt32;
  hasCoLocationGroup @9 :Bool;
  coLocationGroup @10 :UInt32;
}

struct IntermediateDataSet {
  id @0 :GraphId128;
  producer @1 :UInt32;
  resultType @2 :ResultPartitionType;
  consumers @3 :List(UInt32);
}

struct JobEdge {
  source @0 :UInt32;
  target @1 :UInt32;
  pattern @2 :DistributionPattern;
  shipStrategyName @3 :Text;
  partitioner @4 :PartitionerKind;
  keyGroupMaxParallelism @5 :Int32;
  sourceNodeId @6 :Int32;
  targetNodeId @7 :Int32;
}

struct SlotSharingGroup {
  name @0 :Text;
  vertices @1 :List(UInt32);
}

struct CoLocationGroup {
  key @0 :Text;
  vertices @1 :List(UInt32);
}

struct CheckpointSettings {
  interval @0 :Int64;
  triggerVertices @1 :List(UInt32);
  ackVertices @2 :List(UInt32);
  commitVertices @3 :List(UInt32);
}

struct ConfigEntry {
  key @0 :Text;
  value @1 :Text;
}

struct ExecutionConfig {
  maxParallelism @0 :Int32;
  bufferTimeout @1 :Int64;
  chainingEnabled @2 :Bool;
  exchangeMode @3 :GlobalDataExchangeMode;
  # The job's own settings over the cluster's (restart-strategy.*, failover strategy).
  jobConfiguration @4 :List(ConfigEntry);
}

struct JobGraph {
  jobId @0 :GraphId128;
  name @1 :Text;
  vertices @2 :List(JobVertex);
  dataSets @3 :List(IntermediateDataSet);
  edges @4 :List(JobEdge);
  slotSharingGroups @5 :List(SlotSharingGroup);
  coLocationGroups @6 :List(CoLocationGroup);
  checkpointing @7 :CheckpointSettings;
  executionConfig @8 :ExecutionConfig;
  savepointRestorePath @9 :Text;
  # Flink's SavepointRestoreSettings: the savepoint or checkpoint to start from (empty: none).
  allowNonRestoredState @10 :Bool;
  claimMode @11 :UInt8;
  # Flink's RecoveryClaimMode: 0 NO_CLAIM (the snapshot stays the user's), 1 CLAIM.
  packageHash @12 :Text;
  # SHA-256 of the job's package on the blob server, 64 lower-case hex digits (Flink's user jar
  # blob keys); empty for a program compiled into the runtime.
  libraryHash @13 :Text;
  # SHA-256 of the job's library: its content key on the blob server.
}

struct ResultPartitionDeploymentDescriptor {
  resultId @0 :GraphId128;
  partitionNumber @1 :Int32;
  partitionType @2 :ResultPartitionType;
  numberOfSubpartitions @3 :Int32;
  partitioner @4 :PartitionerKind;
  keyGroupMaxParallelism @5 :Int32;
}

# Where a consumed partition's producer runs (Flink's ConnectionID); dataPort 0: this process.
struct ProducerLocation {
  resourceId @0 :Text;
  host @1 :Text;
  dataPort @2 :UInt16;
}

struct InputGateDeploymentDescriptor {
  consumedResultId @0 :GraphId128;
  partitionType @1 :ResultPartitionType;
  consumedSubpartitionIndex @2 :Int32;
  partitionNumbers @3 :List(Int32);
  # One per channel, or empty when unknown.
  producerLocations @4 :List(ProducerLocation);
}

struct TaskDeploymentDescriptor {
  jobId @0 :GraphId128;
  jobVertexId @1 :GraphId128;
  taskName @2 :Text;
  subtaskIndex @3 :Int32;
  parallelism @4 :Int32;
  maxParallelism @5 :Int32;
  attemptNumber @6 :Int32;
  producedPartitions @7 :List(ResultPartitionDeploymentDescriptor);
  inputGates @8 :List(InputGateDeploymentDescriptor);
  checkpointingMode @9 :UInt8;
  # graph::checkpointing_mode: 0 none, 1 exactly-once, 2 at-least-once.
  checkpointStorageDir @10 :Text;
  restore @11 :Data;
  # A TaskRestore of checkpoint.capnp as runtime/state/state_codec writes it; empty: none.
  stateBackend @12 :Text;
  # state.backend.type: hashmap or rocksdb (empty: hashmap).
  incrementalCheckpoints @13 :Bool;
  jobName @14 :Text;
  # The job's name: the job_name of the task's metrics (Flink's task scope).
  packageHash @15 :Text;
  # The JobGraph's packageHash and libraryHash: the only code the TaskExecutor may run for it.
  libraryHash @16 :Text;
  executionGraphId @17 :GraphId128;
  # The ExecutionGraph of the attempt (part of its ExecutionAttemptID; random per graph).
  stateBackendConfiguration @18 :List(ConfigEntry);
  # The state.backend.rocksdb.* keys the JobMaster resolved for the job (the job's own over the
  # cluster's): what the task's keyed state backend is opened with.
}
