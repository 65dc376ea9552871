#include "runtime/common/tls_suites.hpp"

#include <memory>

#include <openssl/ssl.h>

#include "runtime/common/openssl_text.hpp"

namespace flint {

namespace {

expected<int> protocol_version(const std::string& protocol) {
  if (protocol == "TLSv1.2")
    return TLS1_2_VERSION;
  if (protocol == "TLSv1.3")
    return TLS1_3_VERSION;
  return make_error(errc::invalid_argument,
                    "security.ssl.protocol: '" + protocol
                      + "' is not supported; use TLSv1.2 (the default) or TLSv1.3");
}

} // namespace

expected<tls_suites> resolve_tls_suites(const std::string& protocol,
                                        const std::string& algorithms) {
  tls_suites out;
  auto version = protocol_version(protocol);
  if (!version)
    return version.error();
  out.version = *version;
  if (algorithms.empty())
    return out;
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(SSL_CTX_new(TLS_method()), &SSL_CTX_free);
  if (!ctx || SSL_CTX_set_cipher_list(ctx.get(), "ALL:COMPLEMENTOFALL") != 1
      || SSL_CTX_set_ciphersuites(ctx.get(),
                                  "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                  "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256:"
                                  "TLS_AES_128_CCM_8_SHA256")
           != 1)
    return make_error(errc::internal, "cannot list OpenSSL's cipher suites: " + openssl_reason());
  auto* known = SSL_CTX_get_ciphers(ctx.get());
  std::size_t start = 0;
  while (start <= algorithms.size()) {
    auto end = algorithms.find(',', start);
    if (end == std::string::npos)
      end = algorithms.size();
    auto name = algorithms.substr(start, end - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    start = end + 1;
    if (name.empty())
      continue;
    const SSL_CIPHER* found = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(known) && found == nullptr; ++i) {
      const auto* c = sk_SSL_CIPHER_value(known, i);
      const char* standard = SSL_CIPHER_standard_name(c);
      if (name == SSL_CIPHER_get_name(c) || (standard != nullptr && name == standard))
        found = c;
    }
    if (found == nullptr)
      return make_error(errc::invalid_argument,
                        "security.ssl.algorithms: '" + name
                          + "' is not a cipher suite OpenSSL knows (IANA or OpenSSL names)");
    auto& list = std::string(SSL_CIPHER_get_version(found)) == "TLSv1.3" ? out.ciphersuites
                                                                          : out.cipher_list;
    if (!list.empty())
      list += ':';
    list += SSL_CIPHER_get_name(found);
  }
  if (out.version == TLS1_2_VERSION && out.cipher_list.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.algorithms lists no TLS 1.2 cipher suite, and "
                      "security.ssl.protocol is TLSv1.2");
  if (out.version == TLS1_3_VERSION && out.ciphersuites.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.algorithms lists no TLS 1.3 cipher suite, and "
                      "security.ssl.protocol is TLSv1.3");
  return out;
}

expected<unit> apply_tls_suites(SSL_CTX& ctx, const tls_suites& suites) {
  if (SSL_CTX_set_min_proto_version(&ctx, suites.version) != 1
      || SSL_CTX_set_max_proto_version(&ctx, suites.version) != 1)
    return make_error(errc::invalid_argument,
                      "security.ssl.protocol: OpenSSL refuses the version: " + openssl_reason());
  if (!suites.cipher_list.empty() && SSL_CTX_set_cipher_list(&ctx, suites.cipher_list.c_str()) != 1)
    return make_error(errc::invalid_argument,
                      "security.ssl.algorithms: OpenSSL refuses " + suites.cipher_list + ": "
                        + openssl_reason());
  if (!suites.ciphersuites.empty()
      && SSL_CTX_set_ciphersuites(&ctx, suites.ciphersuites.c_str()) != 1)
    return make_error(errc::invalid_argument,
                      "security.ssl.algorithms: OpenSSL refuses " + suites.ciphersuites + ": "
                        + openssl_reason());
  return unit{};
}

void apply_tls_suites(SSL& ssl, const tls_suites& suites) {
  SSL_set_min_proto_version(&ssl, suites.version);
  SSL_set_max_proto_version(&ssl, suites.version);
  if (!suites.cipher_list.empty())
    SSL_set_cipher_list(&ssl, suites.cipher_list.c_str());
  if (!suites.ciphersuites.empty())
    SSL_set_ciphersuites(&ssl, suites.ciphersuites.c_str());
}

} // namespace flint
