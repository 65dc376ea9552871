@0xb22dad7b31c0e059;
# The blob server's protocol (runtime/actors/blob/blob_gateway.hpp; Flink's BlobServer with
# permanent blobs): job libraries and job packages, stored by key.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("flint::schema");

struct PutBlobRequest {
  data @0 :Data;
}

struct PutBlobResponse {
  # The content key: SHA-256 of the data, 64 lower-case hex digits.
  key @0 :Text;
}

struct GetBlobRequest {
  # A content key or a job package key ("job-" + 32 hex digits).
  key @0 :Text;
}

struct GetBlobResponse {
  data @0 :Data;
}

struct PutJobPackageRequest {
  # The job id, 32 lower-case hex digits.
  jobId @0 :Text;
  # An encoded JobPackage (job_package.capnp).
  data @1 :Data;
}

struct PutJobPackageResponse {
  # "job-" + the job id.
  key @0 :Text;
}
