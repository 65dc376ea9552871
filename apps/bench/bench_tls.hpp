#pragma once
/// Mutual TLS for the two-process benchmarks (`flint-bench rpc`, `flint-bench exchange --tls`):
/// a throw-away CA with a server and a client certificate from deploy/gen-certs.sh, and the
/// node options that use them.

#include <filesystem>
#include <optional>
#include <string>

#include "runtime/actors/rpc/rpc_service.hpp"

namespace flint::bench {

/// `dir`/ca.pem, server.pem and client.pem; the directory goes with the object.
class bench_certificates {
public:
  /// Made with gen-certs.sh in a fresh temporary directory; nothing (and why, on stderr) if the
  /// script or openssl is missing or fails.
  static std::optional<bench_certificates> make(const std::string& bench);
  bench_certificates(bench_certificates&& other) noexcept;
  bench_certificates(const bench_certificates&) = delete;
  bench_certificates& operator=(const bench_certificates&) = delete;
  bench_certificates& operator=(bench_certificates&&) = delete;
  ~bench_certificates();

  std::string ca() const { return (dir_ / "ca.pem").string(); }
  std::string server() const { return (dir_ / "server.pem").string(); }
  std::string client() const { return (dir_ / "client.pem").string(); }

private:
  explicit bench_certificates(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

/// TLS on with `keystore` and `truststore`; off when `keystore` is empty.
rpc::tls_options tls_of(const std::string& keystore, const std::string& truststore);

} // namespace flint::bench
