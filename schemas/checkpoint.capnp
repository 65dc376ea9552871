@0xa12545a47d44dd87;
# Checkpoint state as it is stored and sent: what a task acknowledges (TaskStateSnapshot), what a
# restored task starts from (TaskRestore) and what a checkpoint's `_metadata` file holds
# (CheckpointMetadata, behind an 8-byte magic/version header). The values are in
# runtime/state/state_handles.hpp, the codec in runtime/state/state_codec.cpp.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct OperatorId128 {
  # An OperatorID.
  upper @0 :UInt64;
  lower @1 :UInt64;
}

struct StreamStateHandle {
  path @0 :Text;
  # Absolute path of a file in checkpoint storage; empty: the state is `inlineData`.
  offset @1 :UInt64;
  # First byte of the state in the file.
  size @2 :UInt64;
  # Bytes of the state in the file.
  inlineData @3 :Data;
}

struct NamedFile {
  name @0 :Text;
  # A plain file name in the backend's local instance, no directories.
  handle @1 :StreamStateHandle;
}

struct KeyedStateHandle {
  firstKeyGroup @0 :Int32;
  lastKeyGroup @1 :Int32;
  # Inclusive; lastKeyGroup < firstKeyGroup: no key groups.
  keyGroupOffsets @2 :List(UInt64);
  # One per key group, relative to the first byte of `data`; empty when `incremental`.
  data @3 :StreamStateHandle;
  incremental @4 :Bool;
  # A RocksDB instance's files (Flink's IncrementalRemoteKeyedStateHandle) instead of
  # `keyGroupOffsets` and `data`.
  sharedFiles @5 :List(NamedFile);
  # SST files in the job's shared/ directory, which later checkpoints may refer to too.
  privateFiles @6 :List(NamedFile);
  # The instance's other files, in the checkpoint's own directory.
  baseCheckpointId @7 :Int64 = -1;
  # Incremental: the completed checkpoint whose shared files this snapshot could reuse; -1: none.
}

struct OperatorSubtaskState {
  operatorId @0 :OperatorId128;
  keyed @1 :List(KeyedStateHandle);
  listEntries @2 :List(Data);
  # Operator list state entries.
}

struct TaskStateSnapshot {
  operators @0 :List(OperatorSubtaskState);
  # The chain's operators, head first.
  finished @1 :Bool;
}

struct TaskRestore {
  checkpointId @0 :Int64;
  state @1 :TaskStateSnapshot;
}

struct OperatorState {
  operatorId @0 :OperatorId128;
  hasUid @1 :Bool;
  uid @2 :Text;
  parallelism @3 :Int32;
  maxParallelism @4 :Int32;
  subtasks @5 :List(OperatorSubtaskState);
  # By subtask index.
  finished @6 :List(Bool);
  # By subtask index.
}

struct CheckpointMetadata {
  checkpointId @0 :Int64;
  timestamp @1 :Int64;
  # Trigger time, milliseconds since the epoch.
  isSavepoint @2 :Bool;
  operators @3 :List(OperatorState);
}
