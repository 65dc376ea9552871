#pragma once
/// Flink's `security.ssl.protocol` and `security.ssl.algorithms` in OpenSSL's terms, for every
/// TLS Flint speaks: CAF's transport (runtime/actors/rpc/tls.cpp) and REST's HTTPS
/// (runtime/rest/rest_tls.cpp).

#include <string>

#include "runtime/common/expected.hpp"

struct ssl_ctx_st; // OpenSSL's SSL_CTX
struct ssl_st;     // OpenSSL's SSL

namespace flint {

struct tls_suites {
  /// TLS1_2_VERSION or TLS1_3_VERSION: the one version spoken.
  int version = 0;
  /// OpenSSL names: the TLS 1.2 suites (cipher list) and the TLS 1.3 ones (ciphersuites); empty:
  /// OpenSSL's defaults.
  std::string cipher_list;
  std::string ciphersuites;
};

/// `protocol` is "TLSv1.2" or "TLSv1.3"; `algorithms` lists suites by IANA name (Flink's, e.g.
/// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256) or OpenSSL's, comma-separated, and must hold one for
/// the protocol. Errors name the key.
expected<tls_suites> resolve_tls_suites(const std::string& protocol,
                                        const std::string& algorithms);

/// Applies `suites` to a context, or to one session.
expected<unit> apply_tls_suites(ssl_ctx_st& ctx, const tls_suites& suites);
void apply_tls_suites(ssl_st& ssl, const tls_suites& suites);

} // namespace flint
