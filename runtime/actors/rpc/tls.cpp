#include "runtime/actors/rpc/tls.hpp"

#include <dlfcn.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <spdlog/logger.h>

#include "runtime/actors/rpc/inbound_guard.hpp"
#include "runtime/actors/rpc/peer_roles.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/common/openssl_text.hpp"
#include "runtime/common/tls_suites.hpp"

namespace flint::rpc {

namespace {

const std::shared_ptr<spdlog::logger>& logger() {
  // Never destroyed: the detached reaper may log while the process exits.
  static const auto* log = new std::shared_ptr<spdlog::logger>(make_endpoint_logger("tls"));
  return *log;
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

/// At most `per_second` refusal lines a second; then one line saying how many were left out. A
/// peer that retries (a refused TaskManager, every 500 ms) or a stranger's flood cannot fill the
/// log.
class refusal_log {
public:
  explicit refusal_log(int per_second) : per_second_(per_second) {}

  template <class... Args>
  void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    std::uint64_t left_out = 0;
    {
      std::lock_guard<std::mutex> lock(mtx_);
      auto now = std::chrono::steady_clock::now();
      if (now - window_ >= std::chrono::seconds(1)) {
        window_ = now;
        left_out = suppressed_;
        suppressed_ = 0;
        written_ = 0;
      }
      if (written_ >= per_second_) {
        ++suppressed_;
        return;
      }
      ++written_;
    }
    if (left_out > 0)
      logger()->warn("Suppressed {} similar TLS refusal lines in the last second.", left_out);
    logger()->warn(fmt, std::forward<Args>(args)...);
  }

private:
  std::mutex mtx_;
  int per_second_;
  int written_ = 0;
  std::uint64_t suppressed_ = 0;
  std::chrono::steady_clock::time_point window_{};
};

refusal_log& refusals() {
  static auto* log = new refusal_log(10); // never destroyed, as the logger
  return *log;
}

/// What install_tls_guards turned on beyond the guards, in OpenSSL's terms.
struct tls_policy {
  /// Lower-case hex, no colons: 64 digits for SHA-256, 40 for SHA-1.
  std::vector<std::string> fingerprints;
  tls_suites suites;
  std::atomic<std::uint64_t> refused{0};
};

std::mutex policy_mtx;

tls_policy*& policy_slot() {
  static tls_policy* p = nullptr; // never freed: sessions may read it while the process exits
  return p;
}

const tls_policy* current_policy() {
  std::lock_guard<std::mutex> lock(policy_mtx);
  return policy_slot();
}

expected<std::string> normalize_fingerprint(const std::string& text) {
  std::string hex;
  for (char c : text) {
    if (c == ':' || std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return make_error(errc::invalid_argument,
                        "security.ssl.internal.cert.fingerprint: '" + text
                          + "' is not a hex fingerprint");
    hex.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (hex.size() != 64 && hex.size() != 40)
    return make_error(errc::invalid_argument,
                      "security.ssl.internal.cert.fingerprint: '" + text
                        + "' is neither a SHA-256 (32 bytes) nor a SHA-1 (20 bytes) fingerprint");
  return hex;
}

expected<std::unique_ptr<tls_policy>> make_policy(const tls_options& tls) {
  auto p = std::make_unique<tls_policy>();
  auto suites = resolve_tls_suites(tls.protocol, tls.algorithms);
  if (!suites)
    return suites.error();
  p->suites = std::move(*suites);
  for (const auto& text : tls.fingerprints) {
    auto hex = normalize_fingerprint(text);
    if (!hex)
      return hex.error();
    p->fingerprints.push_back(*hex);
  }
  return p;
}

std::string hex_digest(const X509* cert, const EVP_MD* md) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (X509_digest(cert, md, digest, &n) != 1)
    return {};
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(digits[digest[i] >> 4]);
    out.push_back(digits[digest[i] & 15]);
  }
  return out;
}

std::string with_colons(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    if (i > 0)
      out.push_back(':');
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(hex[i]))));
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(hex[i + 1]))));
  }
  return out;
}

/// A certificate whose extended key usage lacks serverAuth cannot serve: a client's.
peer_role role_of(X509* cert) {
  if ((X509_get_extension_flags(cert) & EXFLAG_XKUSAGE) == 0)
    return peer_role::node;
  return (X509_get_extended_key_usage(cert) & XKU_SSL_SERVER) != 0 ? peer_role::node
                                                                    : peer_role::client;
}

/// When a handshake of the RPC transport completes: whether its peer may stay. Inbound, the
/// peer's role is recorded for its connection; outbound, the peer must be a node.
bool admit_peer(SSL* ssl, bool inbound) {
  const auto* p = current_policy();
  if (p == nullptr)
    return true;
  auto fd = SSL_get_fd(ssl);
  // Inbound, only the RPC transport's connections (a REST server in the process has its own
  // rules); outbound, every connection is Flint's RPC or a test's client.
  if (inbound && !is_guarded_connection(fd))
    return true;
  std::unique_ptr<X509, void (*)(X509*)> cert(SSL_get1_peer_certificate(ssl), &X509_free);
  auto refuse = [&](const std::string& why) {
    ++const_cast<tls_policy*>(p)->refused;
    refusals().warn("Refused the TLS peer {} ({}): {}", peer_address(fd),
                   inbound ? "inbound" : "outbound", why);
    return false;
  };
  if (!cert)
    return refuse("it presented no certificate");
  if (!p->fingerprints.empty()) {
    auto sha256 = hex_digest(cert.get(), EVP_sha256());
    auto sha1 = hex_digest(cert.get(), EVP_sha1());
    auto pinned = std::any_of(p->fingerprints.begin(), p->fingerprints.end(),
                              [&](const std::string& f) { return f == sha256 || f == sha1; });
    if (!pinned)
      return refuse("its certificate's SHA-256 fingerprint " + with_colons(sha256)
                    + " is not in security.ssl.internal.cert.fingerprint");
  }
  auto role = role_of(cert.get());
  if (inbound) {
    set_connection_role(fd, role);
    return true;
  }
  if (role == peer_role::client)
    return refuse("it holds a client certificate (no serverAuth): a client cannot serve as a "
                  "node");
  return true;
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

/// After a handshake step: a finished one is no longer watched and its peer is judged (false:
/// refused, the call must fail); a refused one is logged with the peer's address (the reason is
/// only peeked at: the module reads the queue after us).
bool handshake_step(SSL* ssl, int ret, const char* role) {
  if (SSL_is_init_finished(ssl)) {
    {
      std::lock_guard<std::mutex> lock(guard().mtx);
      guard().pending.erase(ssl);
    }
    return admit_peer(ssl, std::string_view(role) == "accept");
  }
  if (ret > 0)
    return true;
  auto code = ERR_peek_error();
  if (code == 0)
    return true; // wants more data
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  refusals().warn("TLS handshake ({}) with {} refused: {}", role, peer_address(SSL_get_fd(ssl)),
                 text);
  return true;
}

/// A finished handshake whose peer was refused: the module sees a fatal TLS error and closes
/// the connection before any RPC byte goes either way.
int refuse_handshake(SSL* ssl) {
  ERR_raise(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED);
  ::shutdown(SSL_get_fd(ssl), SHUT_RDWR);
  return -1;
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
    PEM_read_PrivateKey(key_file.get(), nullptr, &openssl_password_cb, &password), &EVP_PKEY_free);
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
  if (auto policy = make_policy(tls); !policy)
    return policy.error();
  return unit{};
}

void install_tls_guards(const tls_options& tls) {
  auto policy = make_policy(tls);
  if (!policy) {
    // check_tls_files refuses these settings first; a caller that skipped it keeps the
    // strictest reading: nothing it asked for is silently dropped.
    logger()->error("{}", policy.error().message);
    std::abort();
  }
  {
    std::lock_guard<std::mutex> lock(policy_mtx);
    auto* old = policy_slot();
    if (old != nullptr)
      (*policy)->refused.store(old->refused.load());
    policy_slot() = policy->release(); // the old one stays: sessions may hold it
  }
  auto& g = guard();
  std::lock_guard<std::mutex> lock(g.mtx);
  g.timeout = tls.handshake_timeout;
  if (!g.started) {
    g.started = true;
    std::thread([&g] { g.run(); }).detach();
  }
}

std::uint64_t tls_handshakes_timed_out() {
  return guard().timed_out.load();
}

std::uint64_t tls_peers_refused() {
  const auto* p = current_policy();
  return p == nullptr ? 0 : p->refused.load();
}

expected<std::string> certificate_fingerprint(const std::string& pem_file) {
  auto file = open_file(pem_file);
  if (!file)
    return make_error(errc::not_found, "cannot read " + pem_file);
  std::unique_ptr<X509, void (*)(X509*)> cert(
    PEM_read_X509(file.get(), nullptr, nullptr, nullptr), &X509_free);
  if (!cert)
    return make_error(errc::invalid_argument,
                      pem_file + " holds no PEM certificate: " + openssl_reason());
  return with_colons(hex_digest(cert.get(), EVP_sha256()));
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
  if (!flint::rpc::handshake_step(ssl, ret, "accept"))
    return flint::rpc::refuse_handshake(ssl);
  return ret;
}

int SSL_connect(SSL* ssl) {
  static const auto f = flint::rpc::real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  auto ret = f(ssl);
  if (!flint::rpc::handshake_step(ssl, ret, "connect"))
    return flint::rpc::refuse_handshake(ssl);
  return ret;
}

int SSL_set_fd(SSL* ssl, int fd) {
  static const auto f = flint::rpc::real<int (*)(SSL*, int)>("SSL_set_fd");
  auto ret = f(ssl, fd);
  if (const auto* p = flint::rpc::current_policy())
    flint::apply_tls_suites(*ssl, p->suites);
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
