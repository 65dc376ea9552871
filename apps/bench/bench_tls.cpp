#include "apps/bench/bench_tls.hpp"

#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "apps/bench/bench_processes.hpp"

namespace flint::bench {

std::optional<bench_certificates> bench_certificates::make(const std::string& bench) {
  auto gen = find_deploy_script("gen-certs.sh");
  if (!gen) {
    std::fprintf(stderr, "flint-bench %s: no deploy/gen-certs.sh: TLS skipped\n", bench.c_str());
    return std::nullopt;
  }
  auto dir = make_temp_dir(bench + "-tls");
  if (!dir)
    return std::nullopt;
  bench_certificates certs(*dir);
  auto cmd = "bash '" + gen->string() + "' '" + dir->string() + "' server client >/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "flint-bench %s: gen-certs.sh failed: TLS skipped\n", bench.c_str());
    return std::nullopt;
  }
  return certs;
}

bench_certificates::bench_certificates(bench_certificates&& other) noexcept
  : dir_(std::move(other.dir_)) {
  other.dir_.clear();
}

bench_certificates::~bench_certificates() {
  if (dir_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

rpc::tls_options tls_of(const std::string& keystore, const std::string& truststore) {
  rpc::tls_options t;
  t.enabled = !keystore.empty();
  t.keystore = keystore;
  t.truststore = truststore;
  return t;
}

} // namespace flint::bench
