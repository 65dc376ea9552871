#pragma once
/// Blocking calls on a blob server (Flink's BlobClient) for threads that may wait: the CLI's main
/// thread and a TaskExecutor's task threads. Never call these from an actor's handler.
///
/// Every call fails within `timeout` with a clear error: errc::timeout when the server does not
/// answer, errc::unreachable when its actor is gone, the server's own error otherwise.

#include <chrono>
#include <string>
#include <string_view>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "runtime/common/expected.hpp"

namespace flint::blob {

/// Time for a blob call: generous, a library of a few MB crosses a LAN in well under a second.
inline constexpr std::chrono::seconds default_blob_timeout{60};

/// Stores `bytes` and returns its content key.
expected<std::string> upload_blob(caf::actor_system& sys, const caf::actor& blob_server,
                                  std::string_view bytes,
                                  std::chrono::nanoseconds timeout = default_blob_timeout);

/// The blob under `key` (a content key or a job package key); a fetched content blob is checked
/// against its key.
expected<std::string> fetch_blob(caf::actor_system& sys, const caf::actor& blob_server,
                                 const std::string& key,
                                 std::chrono::nanoseconds timeout = default_blob_timeout);

/// Stores a job's package (job_package.hpp) under job_package_key(`job_id_hex`); returns the key.
expected<std::string> upload_job_package(caf::actor_system& sys, const caf::actor& blob_server,
                                         const std::string& job_id_hex, std::string_view package,
                                         std::chrono::nanoseconds timeout = default_blob_timeout);

} // namespace flint::blob
