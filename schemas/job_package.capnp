@0xc7804a18b9be30d2;
# What a TaskExecutor needs to rebuild a job from its library (runtime/actors/blob/job_package.hpp):
# stored on the blob server under "job-<job id>" by `flint run`.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct JobPackage {
  # Content key of the job library on the same blob server.
  libraryKey @0 :Text;
  # The library's file name on the client (for messages only).
  libraryName @1 :Text;
  # The entry point's arguments.
  args @2 :List(Text);
  # The configuration the client built the program with (parallelism.default, ...).
  config @3 :List(ConfigEntry);
  # The submitted JobGraph, as job_graph.capnp's encoding (runtime/graph/codec).
  jobGraph @4 :Data;
  # The entry point the program was built by (`flint run -c NAME`: the library's
  # flint_job_entry_NAME); empty: its FLINT_JOB_ENTRY (flint_job_main).
  entry @5 :Text;

  struct ConfigEntry {
    key @0 :Text;
    value @1 :Text;
  }
}
