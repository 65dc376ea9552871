#pragma once
/// The blob server's protocol (Flink's BlobServer/BlobClient, permanent blobs only): job
/// libraries stored by content and job packages stored by job id, for the TaskExecutors that
/// rebuild a job (DESIGN.md "Job code"). Endpoint id "blob_server"; unfenced, as Flink's blob
/// server is reached without a leader session (it is no RPC endpoint there at all).
///
/// Errors: a key that is not a blob key is errc::invalid_argument, an unknown key
/// errc::not_found, a blob over max_blob_size errc::rejected, a storage failure errc::internal.
/// Messages: schemas/blob.capnp (flint-capnpc generates their C++ types and codecs).

#include <cstddef>
#include <cstdint>

#include "runtime/actors/rpc/method.hpp"
#include "schemas/blob.messages.hpp"

namespace flint::blob {

/// The largest blob the server keeps (a Cap'n Proto Data field holds at most 512 MiB; a job
/// library is a few MB).
/// Under rpc.max-frame-size's default: a blob travels in one call.
inline constexpr std::size_t max_blob_size = 120u << 20;

/// Stores `data` under its content key and answers the key. Idempotent.
struct put_blob {
  static constexpr std::uint32_t id = 0x0B01;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "put_blob";
  using request = put_blob_request;
  using response = put_blob_response;
};

/// Answers the blob stored under `key` (a content key or a job package key).
struct get_blob {
  static constexpr std::uint32_t id = 0x0B02;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "get_blob";
  using request = get_blob_request;
  using response = get_blob_response;
};

/// Stores a job's package under job_package_key(job id), once: the same bytes again are
/// accepted, other bytes are refused (errc::rejected, logged) — a job's code never changes.
struct put_job_package {
  static constexpr std::uint32_t id = 0x0B03;
  static constexpr bool open_to_clients = true;
  static constexpr const char* name = "put_job_package";
  using request = put_job_package_request;
  using response = put_job_package_response;
};

} // namespace flint::blob
