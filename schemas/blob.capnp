@0xb22dad7b31c0e059;
# The blob server's protocol (runtime/actors/blob/blob_gateway.hpp; Flink's BlobServer with
# permanent blobs): job libraries and job packages, stored by key. flint-capnpc generates the
# C++ value types and codecs ("schemas/blob.messages.hpp").

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

using Flint = import "flint.capnp";
$Flint.namespace("flint::blob");

struct PutBlobRequest {
  data @0 :Data;
}

struct PutBlobResponse {
  key @0 :Text;
  # The content key (blob_key.hpp): SHA-256 of the data, 64 lower-case hex digits.
}

struct GetBlobRequest {
  key @0 :Text;
  # A content key or a job package key ("job-" + 32 hex digits).
}

struct GetBlobResponse {
  data @0 :Data;
}

struct PutJobPackageRequest {
  jobId @0 :Text;
  # The job id, 32 lower-case hex digits.
  data @1 :Data;
  # An encoded job_package (job_package.hpp, job_package.capnp).
}

struct PutJobPackageResponse {
  key @0 :Text;
  # "job-" + the job id.
}
