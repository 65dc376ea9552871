#include "apps/cli/cli_settings.hpp"

#include <cctype>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "apps/cli/rest_address.hpp"
#include "runtime/config/config_loader.hpp"
#include "runtime/config/config_options.hpp"

namespace flint::cli {

namespace fs = std::filesystem;

std::string executable_path(const char* argv0) {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

std::string find_config_file(const std::string& given, const std::string& exe_path) {
  if (!given.empty())
    return given;
  if (auto p = config::config_file_in(config::config_dir_from_env()); !p.empty())
    return p;
  // build/bin/flint -> <repo>/deploy/
  auto repo = fs::path(exe_path).parent_path().parent_path().parent_path();
  return config::config_file_in((repo / "deploy").string());
}

std::string describe(std::chrono::nanoseconds d) {
  return config::format_duration(d);
}

expected<cli_settings> resolve(const common_options& opts, const std::string& exe_path) {
  cli_settings out;
  out.config_source = find_config_file(opts.config_file, exe_path);
  std::vector<std::string> args;
  for (const auto& d : opts.dynamic) {
    args.push_back("-D");
    args.push_back(d);
  }
  auto loaded = config::load_configuration(out.config_source, args);
  if (!loaded)
    return loaded.error();
  for (const auto& line : loaded->warnings)
    spdlog::warn("{}", line);
  out.config = std::move(loaded->config);

  if (!opts.jobmanager.empty()) {
    auto hp = config::parse_host_port(opts.jobmanager);
    if (!hp)
      return make_error(
        errc::invalid_argument,
        "-m expects host:port, got '" + opts.jobmanager + "': " + hp.error().message);
    out.address = *hp;
    out.address_given = true;
  } else {
    auto host = out.config.get(config::options::jobmanager_rpc_address);
    auto port = out.config.get(config::options::jobmanager_rpc_port);
    if (!host)
      return host.error();
    if (!port)
      return port.error();
    // With ZooKeeper HA the leader is looked up there: no JobManager port is needed.
    auto ha = out.config.get_raw("high-availability.type");
    if (!ha)
      ha = out.config.get_raw("high-availability");
    std::string type = ha.value_or("");
    for (auto& c : type)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (type == "zookeeper" && (*port <= 0 || *port > 65535))
      *port = 6123;
    if (*port <= 0 || *port > 65535)
      return make_error(errc::invalid_argument,
                        "jobmanager.rpc.port must be a port number, got " + std::to_string(*port));
    out.address = {*host, static_cast<std::uint16_t>(*port)};
  }

  auto ask = out.config.get(config::options::rpc_ask_timeout);
  if (!ask)
    return ask.error();
  out.ask_timeout = *ask;
  if (!opts.timeout.empty()) {
    auto t = config::parse_duration(opts.timeout);
    if (!t)
      return make_error(errc::invalid_argument,
                        "--timeout expects a duration (\"30 s\", \"500 ms\"), got '" + opts.timeout
                          + "': " + t.error().message);
    if (t->count() <= 0)
      return make_error(errc::invalid_argument,
                        "--timeout must be positive, got '" + opts.timeout + "'");
    out.timeout = *t;
    out.ask_timeout = *t;
  }
  if (out.address_given) {
    auto tls = rest_client_tls_from(out.config);
    if (!tls)
      return tls.error();
    auto probe = std::min<std::chrono::nanoseconds>(out.ask_timeout, std::chrono::seconds(3));
    if (auto rpc = rpc_address_via_rest(out.address, probe, *tls)) {
      spdlog::info("-m {} is the JobManager's REST endpoint; its RPC service is at {}",
                   out.address.to_string(), rpc->to_string());
      out.rest_address = out.address;
      out.address = *rpc;
    }
  }
  return out;
}

} // namespace flint::cli
