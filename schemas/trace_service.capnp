@0x8a179f0d725ab512;
# The "trace" endpoint every node runs (DESIGN.md "Traces"): `flint trace` polls it for the
# records of the node's recorder after the last one it has, and prints them as they happen.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Rpc = import "rpc.capnp";

using Flint = import "flint.capnp";
$Flint.namespace("flint::trace");
$Flint.include(["runtime/actors/trace/trace_recorder.hpp"]);
$Flint.codecInclude(["runtime/actors/trace_server/trace_record_codec.hpp"]);

struct TraceRecord $Flint.type("trace::record") {
  # One trace record (runtime/actors/trace/trace_recorder.hpp `record`).
  sequence @0 :UInt64;
  timeUs @1 :Int64;
  # trace::direction: 0 send, 1 receive, 2 reply, 3 response.
  direction @2 :UInt8;
  from @3 :Text;
  to @4 :Text;
  method @5 :Text;
  token @6 :Rpc.FencingToken;
  trace @7 :Rpc.TraceContext;
  isAsk @8 :Bool;
  bytes @9 :UInt32;
  # trace::outcome: 0 ok, 1 rejected, 2 malformed, 3 unknown_method, 4 failed, 5 timeout,
  # 6 unreachable.
  outcome @10 :UInt8;
  # -1 when not applicable.
  latencyUs @11 :Int64;
  detail @12 :Text;
  monitoring @13 :Bool;
  # Part of a monitoring query (REST's polling, the metrics collector), not the cluster's own work.
}

struct FetchTraceRequest {
  fromSequence @0 :UInt64;
  # The first sequence number wanted; 0 takes everything the ring still holds.
  maxRecords @1 :UInt32;
  # At most this many records; 0: `default_fetch_records`. Capped at `max_fetch_records`.
}

struct FetchTraceResponse {
  records @0 :List(TraceRecord);
  # In sequence order.
  missed @1 :UInt64;
  # Records at or after `from_sequence` that the ring overwrote before they were fetched: a gap
  # in the tail.
  nextSequence @2 :UInt64;
  # The `from_sequence` of the next fetch.
  recorded @3 :UInt64;
  # Records the node has recorded so far (the tail is behind by recorded - next_sequence).
}
