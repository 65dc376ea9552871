#pragma once
/// Which peers of this node hold a client certificate (security.ssl.internal.*, gen-certs.sh
/// --client). A certificate whose extended key usage lacks serverAuth is a client's: it may
/// submit, list, cancel and savepoint, but not act as a TaskManager or JobManager.
///
/// The role is learnt per connection (tls.cpp, when a TLS handshake completes) and tied to the
/// node id the peer announces in its RPC handshake (the inbound guard reads it). Endpoints ask by
/// node id (`rpc_endpoint` checks each call's sender). Without TLS there are no roles: every
/// peer is a node.
///
/// A node id announced under a client certificate, while the same id is announced by an open
/// connection under a node certificate (or the other way round), is refused: one process cannot
/// be both. A client's id is remembered for the process's life; a node's only while one of its
/// connections is open.

#include <cstdint>
#include <string>
#include <string_view>

namespace flint::rpc {

enum class peer_role : std::uint8_t { node, client };

/// For tls.cpp: the verified certificate of the connection on `fd` has `role`.
void set_connection_role(int fd, peer_role role);

/// For the inbound guard: the peer on `fd` announced `node_id` (CAF's to_string of its node id)
/// in its RPC handshake. False if that node id is known under the other role (the connection
/// must be dropped).
bool peer_announced(int fd, const std::string& node_id);

/// The role of the connection on `fd` (node if none was set).
peer_role connection_role(int fd);

/// For the inbound guard: `fd` is closed (its number may be reused).
void connection_closed(int fd);

/// Whether any peer ever announced itself with a client certificate (a lock-free fast path).
bool any_client_nodes();

/// Whether `node_id` announced itself over a connection with a client certificate.
bool is_client_node(std::string_view node_id);

/// For tests: forgets every role.
void reset_peer_roles();

} // namespace flint::rpc
