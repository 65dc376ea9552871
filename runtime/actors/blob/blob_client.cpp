#include "runtime/actors/blob/blob_client.hpp"

#include "runtime/actors/blob/blob_gateway.hpp"
#include "runtime/actors/blob/blob_key.hpp"
#include "runtime/actors/rpc/gateway.hpp"

#include <caf/scoped_actor.hpp>

namespace flint::blob {

namespace {

rpc::gateway server_gateway(const caf::actor& blob_server) {
  return rpc::gateway(blob_server, "blob_server");
}

rpc::client_identity who(std::chrono::nanoseconds timeout) {
  return rpc::client_identity{"blob_client", nullptr, timeout};
}

} // namespace

expected<std::string> upload_blob(caf::actor_system& sys, const caf::actor& blob_server,
                                  std::string_view bytes, std::chrono::nanoseconds timeout) {
  if (bytes.size() > max_blob_size)
    return make_error(errc::rejected,
                      "a blob of " + std::to_string(bytes.size()) + " bytes is over the limit of "
                        + std::to_string(max_blob_size) + " bytes");
  caf::scoped_actor self{sys, true};
  auto reply =
    server_gateway(blob_server)
      .ask_blocking<put_blob>(*self, who(timeout), put_blob_request{{bytes.begin(), bytes.end()}});
  if (!reply)
    return reply.error();
  return std::move(reply->key);
}

expected<std::string> fetch_blob(caf::actor_system& sys, const caf::actor& blob_server,
                                 const std::string& key, std::chrono::nanoseconds timeout) {
  caf::scoped_actor self{sys, true};
  auto reply =
    server_gateway(blob_server).ask_blocking<get_blob>(*self, who(timeout), get_blob_request{key});
  if (!reply)
    return reply.error();
  std::string data(reply->data.begin(), reply->data.end());
  // Flink's BlobClient checks the digest of what it downloaded, too.
  if (is_content_key(key) && content_key(data) != key)
    return make_error(
      errc::malformed_message,
      "blob " + key + " arrived corrupted: its content hashes to " + content_key(data));
  return data;
}

expected<std::string> upload_job_package(caf::actor_system& sys, const caf::actor& blob_server,
                                         const std::string& job_id_hex, std::string_view package,
                                         std::chrono::nanoseconds timeout) {
  caf::scoped_actor self{sys, true};
  auto reply =
    server_gateway(blob_server)
      .ask_blocking<put_job_package>(
        *self, who(timeout), put_job_package_request{job_id_hex, {package.begin(), package.end()}});
  if (!reply)
    return reply.error();
  return std::move(reply->key);
}

} // namespace flint::blob
