#include "runtime/rest/rest_tls.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "runtime/common/openssl_text.hpp"
#include "runtime/common/tls_suites.hpp"

namespace flint::rest {

namespace {


error failed(errc code, const std::string& what) {
  return make_error(code, what + ": " + openssl_reason());
}

} // namespace

expected<unit> configure_server_context(ssl_ctx_st& ctx, const rest_tls_options& tls) {
  if (tls.keystore.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.rest.enabled is true but security.ssl.rest.keystore is not "
                      "set (a PEM file with the REST endpoint's certificate and key)");
  if (tls.authentication_enabled && tls.truststore.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.rest.authentication-enabled is true but "
                      "security.ssl.rest.truststore is not set (the CA certificate that signs "
                      "REST clients' certificates, PEM)");
  ERR_clear_error();
  auto suites = resolve_tls_suites(tls.protocol, tls.algorithms);
  if (!suites)
    return suites.error();
  if (auto applied = apply_tls_suites(ctx, *suites); !applied)
    return applied.error();
  // No compression (CRIME), no renegotiation.
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(&ctx, tls.keystore.c_str()) != 1)
    return failed(errc::invalid_argument,
                  "security.ssl.rest.keystore " + tls.keystore + " holds no PEM certificate");
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(tls.keystore.c_str(), "r"), &std::fclose);
  if (!file)
    return make_error(errc::not_found, "cannot read security.ssl.rest.keystore " + tls.keystore);
  auto password = tls.key_password;
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
    PEM_read_PrivateKey(file.get(), nullptr, &openssl_password_cb, &password), &EVP_PKEY_free);
  if (!key)
    return failed(errc::invalid_argument,
                  "security.ssl.rest.keystore " + tls.keystore
                    + " holds no private key readable with the given password "
                      "(security.ssl.rest.key-password)");
  if (SSL_CTX_use_PrivateKey(&ctx, key.get()) != 1 || SSL_CTX_check_private_key(&ctx) != 1)
    return failed(errc::invalid_argument,
                  "the private key in " + tls.keystore + " does not match its certificate");
  if (tls.authentication_enabled) {
    if (SSL_CTX_load_verify_locations(&ctx, tls.truststore.c_str(), nullptr) != 1)
      return failed(errc::invalid_argument,
                    "security.ssl.rest.truststore " + tls.truststore
                      + " holds no PEM certificate");
    // Tells a client which CAs it may answer with.
    if (auto* names = SSL_load_client_CA_file(tls.truststore.c_str()))
      SSL_CTX_set_client_CA_list(&ctx, names);
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  ERR_clear_error();
  return unit{};
}

std::string verified_client(const ssl_st* ssl) {
  if (ssl == nullptr || SSL_get_verify_result(ssl) != X509_V_OK)
    return {};
  auto* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr)
    return {};
  char name[256] = {};
  X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof(name));
  return name[0] != '\0' ? std::string(name) : std::string("a verified certificate");
}

expected<unit> check_tls_files(const rest_tls_options& tls) {
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(SSL_CTX_new(TLS_server_method()),
                                                   &SSL_CTX_free);
  if (!ctx)
    return failed(errc::internal, "cannot make an OpenSSL context for the REST endpoint");
  return configure_server_context(*ctx, tls);
}

} // namespace flint::rest
