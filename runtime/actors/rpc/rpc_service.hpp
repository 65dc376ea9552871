#pragma once
/// A node's RPC service (Flink's RpcService): the actor system setup every Flint process uses,
/// and how endpoints are found across processes. A node publishes one `endpoint_locator` actor
/// on its port (Flink: one Akka port per process); peers connect to host:port and look
/// endpoints up by id ("resource_manager", "dispatcher", ...). Handles obtained this way are
/// ordinary `caf::actor`s: gateways use them exactly like local ones.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "runtime/actors/rpc/inbound_guard.hpp"
#include "runtime/common/expected.hpp"

namespace flint::rpc {

class endpoint_directory;

/// Mutual TLS between nodes (Flink's security.ssl.internal.*): every connection this node accepts
/// or makes presents `keystore`'s certificate and must be answered by one `truststore` signs.
struct tls_options {
  bool enabled = false;
  /// One PEM file with this node's (or client's) certificate and its private key.
  std::string keystore;
  /// The cluster CA's certificate (PEM).
  std::string truststore;
  /// The private key's passphrase, if it has one.
  std::string key_password;
  /// A connection that has not completed its TLS handshake by then is closed.
  std::chrono::milliseconds handshake_timeout{10000};
  /// `security.ssl.internal.cert.fingerprint`: if not empty, a peer's certificate must have one
  /// of these SHA-256 (or, as Flink's, SHA-1) fingerprints; hex, colons and case ignored.
  std::vector<std::string> fingerprints;
  /// `security.ssl.protocol`: the one TLS version spoken, "TLSv1.2" (Flink's default) or "TLSv1.3".
  std::string protocol = "TLSv1.2";
  /// `security.ssl.algorithms`: cipher suites by IANA (Flink's) or OpenSSL name, comma-separated;
  /// empty: OpenSSL's defaults.
  std::string algorithms;
};

struct node_options {
  /// CAF scheduler policy: "stealing" (CAF's default) or "sharing" (lower local latency).
  std::string scheduler_policy = "stealing";
  /// Worker threads; 0 keeps CAF's default (max(cores, 4)).
  std::size_t workers = 0;
  /// Load CAF's middleman (needed to publish or connect).
  bool network = true;
  /// With `tls.enabled`, CAF's OpenSSL transport for every connection (check_tls_files first).
  tls_options tls;
  /// What connections accepted on published ports may do (inbound_guard.hpp).
  inbound_limits inbound;
};

/// Whether `sys` speaks TLS (its configuration loaded the OpenSSL transport).
bool uses_tls(caf::actor_system& sys);

/// Publishes `a` on `port` (0: any free port) at `bind_address` ("" = all interfaces), over TLS
/// when the system uses it. The bound port.
expected<std::uint16_t> publish_actor(caf::actor_system& sys, const caf::actor& a,
                                      std::uint16_t port, const std::string& bind_address);

/// The actor published at host:port, over TLS when the system uses it (errc::unreachable).
expected<caf::actor> connect_actor(caf::actor_system& sys, const std::string& host,
                                   std::uint16_t port);

/// Applies `opts` to `cfg` and silences CAF's own logger (Flint logs through spdlog).
caf::actor_system_config& configure_node(caf::actor_system_config& cfg, const node_options& opts);

/// Spawns the node's locator. Register endpoints with `register_endpoint`. An id not registered
/// there is looked up in `fallback` (the node's endpoint directory, which must outlive the
/// locator), so endpoints created later — a JobMaster per submitted job, "job_master/<job>" —
/// are found by peers without being registered one by one.
caf::actor spawn_endpoint_locator(caf::actor_system& sys,
                                  const endpoint_directory* fallback = nullptr);

/// Makes `endpoint` findable as `endpoint_id` through `locator` (local, asynchronous).
void register_endpoint(const caf::actor& locator, const std::string& endpoint_id,
                       const caf::actor& endpoint);
void unregister_endpoint(const caf::actor& locator, const std::string& endpoint_id);

/// Publishes the locator on `port` (0: any free port) at `bind_address` ("" = all interfaces).
expected<std::uint16_t> publish_locator(caf::actor_system& sys, const caf::actor& locator,
                                        std::uint16_t port, const std::string& bind_address);

/// Connects to the node at host:port and looks `endpoint_id` up there. Blocking; fails with
/// errc::unreachable (no node there) or errc::not_found (no such endpoint) within `timeout`.
expected<caf::actor> connect_endpoint(caf::actor_system& sys, const std::string& host,
                                      std::uint16_t port, const std::string& endpoint_id,
                                      std::chrono::nanoseconds timeout = std::chrono::seconds(10));

} // namespace flint::rpc
