@0x9813179a6fa71148;
# The Dispatcher's protocol (runtime/actors/dispatcher/dispatcher_gateway.hpp). Codec:
# runtime/actors/dispatcher/dispatcher_codec.cpp. Every struct is prefixed `Disp` because all
# schemas share the C++ namespace flint::schema. request_job_status answers with
# job_master.capnp's JmJobStatusResponse.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Cluster = import "cluster.capnp";

struct DispSubmitJobRequest {
  # A JobGraph message of job_graph.capnp, as runtime/graph/codec writes it: nested as bytes so
  # the graph's schema and codec stay the graph layer's own.
  jobGraph @0 :Data;
}

struct DispJobIdRequest {
  jobId @0 :Cluster.Id128;
}

struct DispJobDetails {
  jobId @0 :Cluster.Id128;
  name @1 :Text;
  # graph::job_status as its number; a number past the enum is refused on decode.
  status @2 :UInt8;
  startTimeMs @3 :Int64;
  # -1 while the job runs.
  endTimeMs @4 :Int64 = -1;
  numberOfTasks @5 :Int32;
}

struct DispJobList {
  jobs @0 :List(DispJobDetails);
}

struct DispJobResult {
  jobId @0 :Cluster.Id128;
  # graph::job_status as its number; a number past the enum is refused on decode.
  status @1 :UInt8;
  # Set when the job FAILED.
  failureCause @2 :Text;
  netRuntimeMs @3 :Int64;
}
