#pragma once
/// The blob server endpoint (Flink's BlobServer, permanent blobs): stores job libraries by content
/// and job packages by job id in a storage directory (`blob.storage.directory`; a fresh temporary
/// directory when unset, see make_blob_storage_directory), and serves them to `flint run` and to
/// TaskExecutors (blob_client.hpp). Protocol: blob_gateway.hpp; endpoint id "blob_server".
///
/// Blobs are read and written in the endpoint's own thread: a job library of a few MB costs
/// milliseconds, and requests are rare (one upload per job, one fetch per job and TaskExecutor).

#include <filesystem>
#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "runtime/actors/blob/blob_store.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace spdlog {
class logger;
}

namespace flint::blob {

/// The endpoint id nodes register the blob server under.
inline constexpr const char* blob_server_endpoint_id = "blob_server";

class blob_server : public rpc::rpc_endpoint {
public:
  /// `ha_dir` (empty: none): blobs are also kept there (see blob_store). `logger` (null:
  /// make_endpoint_logger("blob_server")) gets the refusals worth an operator's attention: a job
  /// package that would replace another.
  blob_server(caf::actor_config& cfg, rpc::endpoint_context ctx, std::filesystem::path storage_dir,
              std::filesystem::path ha_dir = {}, std::shared_ptr<spdlog::logger> logger = nullptr);

  const blob_store& store() const noexcept { return store_; }

protected:
  void on_start() override;

private:
  blob_store store_;
  std::shared_ptr<spdlog::logger> logger_;
};

/// Spawns a blob server storing its blobs in `storage_dir` (created when missing), and in
/// `ha_dir` too when given.
caf::actor spawn_blob_server(caf::actor_system& sys, rpc::endpoint_context ctx,
                             std::filesystem::path storage_dir, std::filesystem::path ha_dir = {},
                             std::shared_ptr<spdlog::logger> logger = nullptr);

} // namespace flint::blob
