#pragma once
/// Names of stored blobs (Flink's BlobKey for permanent blobs). A blob put by content is named by
/// the SHA-256 of its bytes in 64 lower-case hex digits, so the same library uploaded twice is
/// stored once and a fetched copy can be checked against its name. A job's package is stored
/// under "job-<job id>" (the id's 32 hex digits), known to every TaskExecutor from the task.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace flint::blob {

/// The SHA-256 digest of `bytes` (FIPS 180-4), computed by OpenSSL.
std::array<std::uint8_t, 32> sha256(std::string_view bytes);

/// The content key of `bytes`: its SHA-256 in 64 lower-case hex digits.
std::string content_key(std::string_view bytes);

/// The key of a job's package: "job-" and the job id's 32 hex digits.
std::string job_package_key(std::string_view job_id_hex);

/// True for a content key (64 lower-case hex digits).
bool is_content_key(std::string_view key);

/// True for a content key or a job package key. Keys become file names: nothing else is
/// accepted, so a key cannot name a path outside the storage directory.
bool is_valid_key(std::string_view key);

} // namespace flint::blob
