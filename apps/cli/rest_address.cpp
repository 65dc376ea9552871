#include "apps/cli/rest_address.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>

#include "runtime/config/config_options.hpp"
#include "runtime/http/httplib.hpp"

namespace flint::cli {

std::optional<config::host_port> rpc_address_from_rest_config(const std::string& body,
                                                              const std::string& rest_host) {
  auto list = nlohmann::json::parse(body, nullptr, false);
  if (list.is_discarded() || !list.is_array())
    return std::nullopt;
  for (const auto& entry : list) {
    if (!entry.is_object() || !entry.contains("key") || !entry.contains("value")
        || !entry["key"].is_string() || !entry["value"].is_string()
        || entry["key"].get<std::string>() != "jobmanager.rpc.port")
      continue;
    const auto text = entry["value"].get<std::string>();
    try {
      std::size_t used = 0;
      auto port = std::stoi(text, &used);
      // 0 is "any free port" as configured, not where the JobManager listens.
      if (used == text.size() && port > 0 && port <= 65535)
        return config::host_port{rest_host, static_cast<std::uint16_t>(port)};
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool speaks_first(const config::host_port& address, std::chrono::milliseconds wait) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found)
      != 0)
    return false;
  bool spoke = false;
  for (auto* a = found; a != nullptr && !spoke; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0)
      continue;
    pollfd p{fd, POLLOUT, 0};
    bool connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0
      || (errno == EINPROGRESS && ::poll(&p, 1, static_cast<int>(wait.count())) == 1
          && (p.revents & POLLOUT) != 0);
    int err = 0;
    socklen_t len = sizeof(err);
    if (connected && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      p = {fd, POLLIN, 0};
      char byte = 0;
      spoke = ::poll(&p, 1, static_cast<int>(wait.count())) == 1
        && ::recv(fd, &byte, 1, MSG_PEEK) == 1;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return spoke;
}

expected<rest_client_tls> rest_client_tls_from(const config::configuration& config) {
  namespace opt = config::options;
  rest_client_tls tls;
  auto enabled = config.get(opt::security_ssl_rest_enabled);
  auto authentication = config.get(opt::security_ssl_rest_authentication_enabled);
  auto truststore = config.find(opt::security_ssl_rest_truststore);
  auto keystore = config.find(opt::security_ssl_rest_keystore);
  auto password = config.find(opt::security_ssl_rest_key_password);
  if (!enabled)
    return enabled.error();
  if (!authentication)
    return authentication.error();
  if (!truststore)
    return truststore.error();
  if (!keystore)
    return keystore.error();
  if (!password)
    return password.error();
  tls.enabled = *enabled;
  tls.authentication_enabled = *authentication;
  if (*truststore)
    tls.truststore = (*truststore)->string();
  if (*keystore)
    tls.keystore = (*keystore)->string();
  if (*password)
    tls.key_password = **password;
  // Without a truststore the endpoint is verified against the system's CAs; without a keystore
  // the client shows no certificate. Either way an endpoint that refuses is asked over RPC, as
  // any address that does not answer as REST.
  return tls;
}

namespace {

/// One GET of `path` at `given` within `timeout`, over HTTPS when `tls.enabled`.
httplib::Result get_once(const config::host_port& given, const std::string& path,
                         std::chrono::nanoseconds timeout, const rest_client_tls& tls) {
  auto limit = std::chrono::duration_cast<std::chrono::microseconds>(timeout);
  auto seconds = static_cast<time_t>(limit.count() / 1000000);
  auto micros = static_cast<time_t>(limit.count() % 1000000);
  auto configure = [&](auto& c) {
    c.set_connection_timeout(seconds, micros);
    c.set_read_timeout(seconds, micros);
    c.set_write_timeout(seconds, micros);
  };
  if (!tls.enabled) {
    httplib::Client client(given.host, given.port);
    configure(client);
    return client.Get(path);
  }
  const bool with_cert = tls.authentication_enabled && !tls.keystore.empty();
  std::optional<httplib::SSLClient> made;
  if (!with_cert) {
    made.emplace(given.host, given.port);
  } else {
    // httplib takes no key password: the keystore's certificate and key are read here, with the
    // configured password (empty: an encrypted key fails instead of OpenSSL prompting on the
    // terminal). SSL_CTX_use_* takes its own references; ours are freed on return.
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(tls.keystore.c_str(), "r"),
                                                  &BIO_free);
    if (!bio)
      return httplib::Result{nullptr, httplib::Error::SSLLoadingCerts};
    std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
    BIO_reset(bio.get());
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr,
                              const_cast<char*>(tls.key_password.c_str())),
      &EVP_PKEY_free);
    if (!cert || !key)
      return httplib::Result{nullptr, httplib::Error::SSLLoadingCerts};
    made.emplace(given.host, given.port, cert.get(), key.get());
  }
  auto& client = *made;
  if (!tls.truststore.empty())
    client.set_ca_cert_path(tls.truststore.c_str());
  client.enable_server_certificate_verification(true);
  configure(client);
  return client.Get(path);
}

} // namespace

std::optional<config::host_port> rpc_address_via_rest(const config::host_port& given,
                                                      std::chrono::nanoseconds timeout,
                                                      const rest_client_tls& tls) {
  // Flint's RPC service speaks first (CAF's BASP handshake), an HTTP server waits for the
  // request: an address that speaks first is not asked over HTTP, so the JobManager does not log
  // a stranger's bytes for every command given its RPC address.
  auto wait = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(timeout),
                       std::chrono::milliseconds(300));
  if (speaks_first(given, wait))
    return std::nullopt;
  auto res = get_once(given, "/jobmanager/config", timeout, tls);
  if (!res || res->status != 200)
    return std::nullopt;
  return rpc_address_from_rest_config(res->body, given.host);
}

} // namespace flint::cli
