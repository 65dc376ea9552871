@0x9813179a6fa71148;
# The Dispatcher's protocol: its messages. The methods are declared in
# runtime/actors/dispatcher/dispatcher_gateway.hpp; flint-capnpc generates the C++ value types and
# codecs ("schemas/dispatcher.messages.hpp"). Every struct is prefixed `Disp` because all schemas
# share the C++ namespace flint::schema. request_job_status answers with job_master.capnp's
# JmJobStatusResponse.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::dispatcher");
$Flint.prefix("Disp");
$Flint.include(["runtime/graph/job_graph.hpp", "runtime/graph/job_status.hpp"]);
$Flint.codecInclude(["runtime/actors/common/cluster_codec.hpp",
                     "runtime/actors/common/graph_payloads.hpp"]);

using Cluster = import "cluster.capnp";

struct DispSubmitJobRequest {
  jobGraph @0 :Data $Flint.type("graph::job_graph");
  # A JobGraph message of job_graph.capnp, as runtime/graph/codec writes it: nested as bytes so
  # the graph's schema and codec stay the graph layer's own.
}

struct DispJobIdRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
}

struct DispTriggerSavepointRequest {
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  targetDirectory @1 :Text;
  stop @2 :Bool;
  drain @3 :Bool;
  # With stop: the sources run event time to its end first (Flink's stop --drain).
}

struct DispJobDetails {
  # One line of `flint list` (Flink's JobDetails essentials).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  name @1 :Text;
  status @2 :UInt8 $Flint.type("graph::job_status") $Flint.init("graph::job_status::created");
  # Sent as its number; a number past the enum is refused on decode.
  startTimeMs @3 :Int64;
  endTimeMs @4 :Int64 = -1;
  # -1 while the job runs.
  numberOfTasks @5 :Int32;
}

struct DispJobList {
  jobs @0 :List(DispJobDetails);
}

struct DispJobResult {
  # How a job ended (Flink's JobResult).
  jobId @0 :Cluster.Id128 $Flint.type("graph::job_id");
  status @1 :UInt8 $Flint.type("graph::job_status") $Flint.init("graph::job_status::finished");
  # Sent as its number; a number past the enum is refused on decode.
  failureCause @2 :Text;
  # Set when the job FAILED.
  netRuntimeMs @3 :Int64;
}
