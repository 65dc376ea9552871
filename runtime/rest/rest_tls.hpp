#pragma once
/// TLS on the REST endpoint (Flink's `security.ssl.rest.*`, SecurityOptions): HTTPS with the
/// endpoint's own certificate and, with authentication, mutual TLS — a client without a
/// certificate the truststore signed is refused in the TLS handshake. Files are PEM, as for
/// `security.ssl.internal.*`. Only this header's struct is seen outside runtime/rest; the
/// OpenSSL context is built in rest_tls.cpp.

#include <string>

#include "runtime/common/expected.hpp"

struct ssl_ctx_st; // OpenSSL's SSL_CTX
struct ssl_st;     // OpenSSL's SSL

namespace flint::rest {

struct rest_tls_options {
  /// `security.ssl.rest.enabled`: the endpoint speaks HTTPS only.
  bool enabled = false;
  /// `security.ssl.rest.keystore`: the endpoint's certificate (and chain) and private key, one
  /// PEM file.
  std::string keystore;
  /// `security.ssl.rest.truststore`: the CA certificates a client's certificate must chain to
  /// (PEM); needed with authentication.
  std::string truststore;
  /// `security.ssl.rest.key-password`: decrypts the keystore's private key.
  std::string key_password;
  /// `security.ssl.rest.authentication-enabled`: mutual TLS (only with `enabled`).
  bool authentication_enabled = false;
  /// `security.ssl.protocol` and `security.ssl.algorithms` (Flink's keys, shared with the
  /// internal TLS): the one version spoken and the suites allowed (empty: OpenSSL's defaults).
  std::string protocol = "TLSv1.2";
  std::string algorithms;

  /// Every client proved, in the handshake, a certificate the truststore signed.
  bool authenticates() const noexcept { return enabled && authentication_enabled; }
};

/// Sets `ctx` up as the endpoint's server context: `protocol` only, with `algorithms`, the keystore's certificate
/// and the key that matches it and, with authentication, the truststore and a required, verified
/// client certificate. Errors name the key and carry OpenSSL's reason.
expected<unit> configure_server_context(ssl_ctx_st& ctx, const rest_tls_options& tls);

/// The subject of the certificate `ssl`'s peer proved and the truststore verified ("CN=alice");
/// empty for none (no TLS, no certificate, or one that did not verify).
std::string verified_client(const ssl_st* ssl);

/// The files load into a throw-away context: a node checks them before it starts anything.
expected<unit> check_tls_files(const rest_tls_options& tls);

} // namespace flint::rest
