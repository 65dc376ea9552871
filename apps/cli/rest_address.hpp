#pragma once
/// Flink's `-m host:port` names the JobManager's REST endpoint; Flint's CLI talks RPC. Given an
/// address, the CLI first asks it as REST (`GET /jobmanager/config`, Flink's
/// ClusterConfigurationInfoHandler) for the JobManager's RPC port; an address that does not answer
/// as REST is taken as the RPC address itself. Only the address the user gave is ever contacted.

#include <chrono>
#include <optional>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::cli {

/// The RPC address named by a `/jobmanager/config` answer (`[{"key":..,"value":..}]`), reached at
/// `rest_host` (the host the user gave: the JobManager's RPC service runs on the REST endpoint's
/// machine). None when the body is not such a list or names no usable `jobmanager.rpc.port`.
std::optional<config::host_port> rpc_address_from_rest_config(const std::string& body,
                                                              const std::string& rest_host);

/// Whether the server at `address` sends bytes before it is sent any, within `wait` (Flint's RPC
/// service does: CAF's handshake; an HTTP server does not).
bool speaks_first(const config::host_port& address, std::chrono::milliseconds wait);

/// How the client speaks to a REST endpoint behind `security.ssl.rest.*` (Flink's RestClient
/// reads the same keys): HTTPS, the server's certificate verified against `truststore`, and with
/// authentication its own certificate and key from `keystore` (one PEM file, as the server's).
struct rest_client_tls {
  bool enabled = false;
  std::string truststore;
  std::string keystore;
  std::string key_password;
  bool authentication_enabled = false;
};

/// The client's rest_client_tls from `security.ssl.rest.*` of `config`.
expected<rest_client_tls> rest_client_tls_from(const config::configuration& config);

/// Asks `given` as a REST endpoint, within `timeout`, over HTTPS when `tls.enabled`. None when it
/// does not answer as Flint's or Flink's REST (a closed port, an RPC port, another service, a
/// certificate the truststore does not verify).
std::optional<config::host_port> rpc_address_via_rest(const config::host_port& given,
                                                      std::chrono::nanoseconds timeout,
                                                      const rest_client_tls& tls = {});

} // namespace flint::cli
