#pragma once
/// What Flint adds to CAF 0.17's OpenSSL transport so that mutual TLS can be trusted
/// (CAF-NOTES "TLS"):
///
/// - `check_tls_files`: the module accepts a missing or wrong key, certificate or passphrase at
///   start and aborts the process at the first connection; the files are checked up front, with
///   an error naming the file and OpenSSL's reason.
/// - `install_tls_guards`: guards on the module's OpenSSL calls, by symbol interposition (the
///   process defines SSL_read, SSL_write, SSL_accept, SSL_connect, SSL_set_fd and SSL_free, and
///   forwards to libssl's):
///   * OpenSSL's per-thread error queue is cleared before each call. The module never clears it;
///     OpenSSL 3 leaves "unexpected eof" there when one peer goes, and the next harmless "no data
///     yet" of any other connection on that thread was taken as fatal — one peer's disconnect
///     dropped every other TLS connection of the node.
///   * A connection whose handshake is not complete `handshake_timeout` after it was accepted or
///     opened is shut down (the module has no such bound: an idle TCP connection stayed forever).
///     Its socket is shut down, not closed: the multiplexer sees end of file and frees it.
///   * What SSL_read decrypted goes through the inbound guard's protocol check
///     (inbound_guard.hpp); the connection cap sits there too, for plain and TLS alike.
///   The executable must export these symbols: targets linking flint_rpc get the linker flags.

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/expected.hpp"

namespace flint::rpc {

/// The keystore holds a certificate and the private key matching it (decrypted with the
/// password if set), the truststore at least one CA certificate; the fingerprints, protocol and
/// algorithms are ones OpenSSL knows. Errors name the file or the key.
expected<unit> check_tls_files(const tls_options& tls);

/// Turns the guards on for this process (idempotent; the latest settings win). Besides the
/// guards above, on every connection of the RPC transport:
/// - the TLS version is `tls.protocol` only, the cipher suites `tls.algorithms` if set;
/// - a peer whose certificate's fingerprint is not among `tls.fingerprints` (if any) is refused
///   when the handshake completes, before a byte of RPC is read or written;
/// - a certificate without serverAuth in its extended key usage is a client's (gen-certs.sh
///   --client): a node does not connect to a client as if to a node (refused), and what a
///   client's inbound connection announces is recorded as a client's (peer_roles.hpp).
void install_tls_guards(const tls_options& tls);

/// The SHA-256 fingerprint of the first certificate in a PEM file, as "AB:CD:…" (what
/// security.ssl.internal.cert.fingerprint lists).
expected<std::string> certificate_fingerprint(const std::string& pem_file);

/// Peers refused so far for their certificate (fingerprint or role).
std::uint64_t tls_peers_refused();

/// Connections shut down so far because their handshake took too long (for tests and logs).
std::uint64_t tls_handshakes_timed_out();

} // namespace flint::rpc
