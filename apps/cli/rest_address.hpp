#pragma once
/// Flink's `-m host:port` names the JobManager's REST endpoint; Flint's CLI talks RPC. Given an
/// address, the CLI first asks it as REST (`GET /jobmanager/config`, Flink's
/// ClusterConfigurationInfoHandler) for the JobManager's RPC port; an address that does not answer
/// as REST is taken as the RPC address itself. Only the address the user gave is ever contacted.

#include <chrono>
#include <optional>
#include <string>

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

/// Asks `given` as a REST endpoint, within `timeout`. None when it does not answer as Flint's or
/// Flink's REST (a closed port, an RPC port, another service).
std::optional<config::host_port> rpc_address_via_rest(const config::host_port& given,
                                                      std::chrono::nanoseconds timeout);

} // namespace flint::cli
