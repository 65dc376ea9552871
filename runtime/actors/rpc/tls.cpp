#include "runtime/actors/rpc/tls.hpp"

#include <dlfcn.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/logger.h>

#include "runtime/actors/rpc/inbound_guard.hpp"
#include "runtime/common/logging.hpp"

namespace flint::rpc {

namespace {

const std::shared_ptr<spdlog::logger>& logger() {
  // Never destroyed: the detached reaper may log while the process exits.
  static const auto* log = new std::shared_ptr<spdlog::logger>(make_endpoint_logger("tls"));
  return *log;
}

/// OpenSSL's reason for the last failure, taken off the queue.
std::string openssl_reason() {
  auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "unknown reason";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

int password_cb(char* buf, int size, int, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  auto n = std::min<std::size_t>(password->size(), static_cast<std::size_t>(size));
  std::copy_n(password->data(), n, buf);
  return static_cast<int>(n);
}

using file_ptr = std::unique_ptr<FILE, int (*)(FILE*)>;

file_ptr open_file(const std::string& path) {
  return file_ptr(std::fopen(path.c_str(), "r"), &std::fclose);
}

/// Handshakes not yet complete, by session: their socket and when they began.
struct handshake_guard {
  std::mutex mtx;
  std::condition_variable cv;
  std::map<const SSL*, std::pair<int, std::chrono::steady_clock::time_point>> pending;
  std::chrono::milliseconds timeout{0};
  std::atomic<std::uint64_t> timed_out{0};
  bool started = false;

  void run() {
    std::unique_lock<std::mutex> lock(mtx);
    for (;;) {
      cv.wait_for(lock, std::chrono::milliseconds(200));
      auto now = std::chrono::steady_clock::now();
      std::vector<std::string> closed;
      for (auto it = pending.begin(); it != pending.end();) {
        if (timeout.count() > 0 && now - it->second.second > timeout) {
          // Under the lock: SSL_free (which takes it too) runs before CAF closes the socket, so
          // this fd is still the session's, not a reused number.
          auto fd = it->second.first;
          closed.push_back(peer_address(fd));
          ::shutdown(fd, SHUT_RDWR);
          ++timed_out;
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
      // Logged without the lock: the network threads' SSL calls wait on it.
      auto limit = timeout.count();
      lock.unlock();
      for (const auto& peer : closed)
        logger()->warn(
          "Closing the connection with {}: its TLS handshake did not complete "
          "within {} ms.",
          peer, limit);
      lock.lock();
    }
  }
};

handshake_guard& guard() {
  // Never destroyed: the multiplexer may still call in while the process exits.
  static auto* g = new handshake_guard;
  return *g;
}

template <class F>
F real(const char* name) {
  void* f = dlvsym(RTLD_NEXT, name, "OPENSSL_3.0.0");
  if (f == nullptr)
    f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "flint: cannot find OpenSSL's %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

/// After a handshake step: a finished one is no longer watched; a refused one is logged with
/// the peer's address (the reason is only peeked at: the module reads the queue after us).
void handshake_step(SSL* ssl, int ret, const char* role) {
  if (SSL_is_init_finished(ssl)) {
    std::lock_guard<std::mutex> lock(guard().mtx);
    guard().pending.erase(ssl);
    return;
  }
  if (ret > 0)
    return;
  auto code = ERR_peek_error();
  if (code == 0)
    return; // wants more data
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  logger()->warn("TLS handshake ({}) with {} refused: {}", role, peer_address(SSL_get_fd(ssl)),
                 text);
}

} // namespace

expected<unit> check_tls_files(const tls_options& tls) {
  if (tls.keystore.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.enabled is true but security.ssl.internal.keystore "
                      "is not set (a PEM file with this node's certificate and key)");
  if (tls.truststore.empty())
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.enabled is true but security.ssl.internal.truststore "
                      "is not set (the cluster CA's certificate, PEM)");
  ERR_clear_error();
  auto key_file = open_file(tls.keystore);
  if (!key_file)
    return make_error(errc::not_found,
                      "cannot read security.ssl.internal.keystore " + tls.keystore);
  std::unique_ptr<X509, void (*)(X509*)> cert(
    PEM_read_X509(key_file.get(), nullptr, nullptr, nullptr), &X509_free);
  if (!cert)
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.keystore " + tls.keystore
                        + " holds no PEM certificate: " + openssl_reason());
  std::rewind(key_file.get());
  auto password = tls.key_password;
  std::unique_ptr<EVP_PKEY, void (*)(EVP_PKEY*)> key(
    PEM_read_PrivateKey(key_file.get(), nullptr, &password_cb, &password), &EVP_PKEY_free);
  if (!key)
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.keystore " + tls.keystore
                        + " holds no private key readable with the given password "
                          "(security.ssl.internal.key-password): "
                        + openssl_reason());
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    return make_error(errc::invalid_argument,
                      "the private key in " + tls.keystore
                        + " does not match its certificate: " + openssl_reason());
  auto ca_file = open_file(tls.truststore);
  if (!ca_file)
    return make_error(errc::not_found,
                      "cannot read security.ssl.internal.truststore " + tls.truststore);
  std::unique_ptr<X509, void (*)(X509*)> ca(PEM_read_X509(ca_file.get(), nullptr, nullptr, nullptr),
                                            &X509_free);
  if (!ca)
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.truststore " + tls.truststore
                        + " holds no PEM certificate: " + openssl_reason());
  ERR_clear_error();
  return unit{};
}

void install_tls_guards(std::chrono::milliseconds handshake_timeout) {
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  g.timeout = handshake_timeout;
  if (!g.started) {
    g.started = true;
    std::thread([&g] { g.run(); }).detach();
  }
}

std::uint64_t tls_handshakes_timed_out() {
  return guard().timed_out.load();
}

} // namespace flint::rpc

// -- the interposed OpenSSL calls ------------------------------------------------------------------
// Defined by the executable, so that libcaf_openssl's calls land here first.

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto f = flint::rpc::real<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  auto ret = f(ssl, buf, num);
  // Decrypted bytes that break the protocol are not handed on: the module sees the end.
  if (ret > 0
      && !flint::rpc::inspect_decrypted(SSL_get_fd(ssl), buf, static_cast<std::size_t>(ret)))
    return 0;
  return ret;
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto f = flint::rpc::real<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return f(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static const auto f = flint::rpc::real<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  auto ret = f(ssl);
  flint::rpc::handshake_step(ssl, ret, "accept");
  return ret;
}

int SSL_connect(SSL* ssl) {
  static const auto f = flint::rpc::real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  auto ret = f(ssl);
  flint::rpc::handshake_step(ssl, ret, "connect");
  return ret;
}

int SSL_set_fd(SSL* ssl, int fd) {
  static const auto f = flint::rpc::real<int (*)(SSL*, int)>("SSL_set_fd");
  auto ret = f(ssl, fd);
  auto& g = flint::rpc::guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  if (g.started)
    g.pending[ssl] = {fd, std::chrono::steady_clock::now()};
  return ret;
}

void SSL_free(SSL* ssl) {
  static const auto f = flint::rpc::real<void (*)(SSL*)>("SSL_free");
  {
    auto& g = flint::rpc::guard();
    std::lock_guard<std::mutex> lock(g.mtx);
    g.pending.erase(ssl);
  }
  f(ssl);
}

} // extern "C"
