#include "runtime/actors/blob/blob_server.hpp"

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/common/logging.hpp"

#include <caf/actor_system.hpp>

#include <spdlog/logger.h>

namespace flint::blob {

blob_server::blob_server(caf::actor_config& cfg, rpc::endpoint_context ctx,
                         std::filesystem::path storage_dir, std::filesystem::path ha_dir,
                         std::shared_ptr<spdlog::logger> logger)
  : rpc_endpoint(cfg, std::move(ctx)),
    store_(ha_dir.empty() ? blob_store(std::move(storage_dir))
                          : blob_store(std::move(storage_dir), std::move(ha_dir))),
    logger_(logger ? std::move(logger) : make_endpoint_logger(blob_server_endpoint_id)) {}

void blob_server::on_start() {
  handle<put_blob>(rpc::fencing::unfenced,
                   [this](put_blob_request req) -> expected<put_blob_response> {
                     auto key = store_.put(req.data);
                     if (!key)
                       return key.error();
                     return put_blob_response{std::move(*key)};
                   });
  handle<get_blob>(rpc::fencing::unfenced,
                   [this](get_blob_request req) -> expected<get_blob_response> {
                     auto data = store_.get(req.key);
                     if (!data)
                       return data.error();
                     return get_blob_response{std::move(*data)};
                   });
  handle<put_job_package>(
    rpc::fencing::unfenced,
    [this](put_job_package_request req) -> expected<put_job_package_response> {
      auto key = store_.put_job_package(req.job_id, req.data);
      if (!key && key.error().code == errc::rejected)
        logger_->warn("Refused to store the job package of job {}: {}", req.job_id,
                      key.error().message);
      if (!key)
        return key.error();
      return put_job_package_response{std::move(*key)};
    });
}

caf::actor spawn_blob_server(caf::actor_system& sys, rpc::endpoint_context ctx,
                             std::filesystem::path storage_dir, std::filesystem::path ha_dir,
                             std::shared_ptr<spdlog::logger> logger) {
  return sys.spawn<blob_server>(std::move(ctx), std::move(storage_dir), std::move(ha_dir),
                                std::move(logger));
}

} // namespace flint::blob
