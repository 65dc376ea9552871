#include "runtime/node/node_settings.hpp"

#include "runtime/config/metric_reporters.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "runtime/config/config_options.hpp"

namespace flint::node {

namespace opt = config::options;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

/// Reads `option` into `out`; the first error wins.
template <class T, class Out>
bool read(const config::configuration& cfg, const config::config_option<T>& option, Out& out,
          error& err) {
  auto v = cfg.get(option);
  if (!v) {
    err = v.error();
    return false;
  }
  if constexpr (std::is_same_v<Out, std::uint16_t> || std::is_same_v<Out, std::int32_t>)
    out = static_cast<Out>(*v);
  else
    out = Out(*v);
  return true;
}

/// Reads an option without a default into `out` when it is set.
template <class T>
bool read_optional(const config::configuration& cfg, const config::config_option<T>& option, T& out,
                   error& err) {
  auto v = cfg.find(option);
  if (!v) {
    err = v.error();
    return false;
  }
  if (*v)
    out = **v;
  return true;
}

expected<unit> read_common(const config::configuration& cfg, common_settings& s) {
  if (auto ok = config::validate(cfg); !ok)
    return ok.error();
  error err;
  config::duration interval{}, timeout{};
  std::int64_t threshold = 0;
  config::duration initial{}, max{}, error_delay{}, refused{}, ask{};
  std::string prom_factory;
  std::filesystem::path blob_dir;
  config::memory_size frame{};
  config::duration handshake{}, idle{};
  std::int64_t max_connections = 0, max_per_host = 0;
  config::memory_size incomplete{};
  if (!read(cfg, opt::heartbeat_interval, interval, err)
      || !read(cfg, opt::heartbeat_timeout, timeout, err)
      || !read(cfg, opt::heartbeat_rpc_failure_threshold, threshold, err)
      || !read(cfg, opt::cluster_registration_initial_timeout, initial, err)
      || !read(cfg, opt::cluster_registration_max_timeout, max, err)
      || !read(cfg, opt::cluster_registration_error_delay, error_delay, err)
      || !read(cfg, opt::cluster_registration_refused_registration_delay, refused, err)
      || !read(cfg, opt::rpc_ask_timeout, ask, err)
      || !read(cfg, opt::rpc_max_frame_size, frame, err)
      || !read(cfg, opt::rpc_max_connections, max_connections, err)
      || !read(cfg, opt::rpc_handshake_timeout, handshake, err)
      || !read(cfg, opt::rpc_max_connections_per_host, max_per_host, err)
      || !read(cfg, opt::rpc_idle_timeout, idle, err)
      || !read(cfg, opt::rpc_max_incomplete_frames_size, incomplete, err)
      || !read_optional(cfg, opt::blob_storage_directory, blob_dir, err)
      || !read_optional(cfg, opt::metrics_reporter_prom_factory_class, prom_factory, err)
      || !read(cfg, opt::metrics_reporter_prom_port, s.prometheus_port, err))
    return err;
  // Any reporter name (metrics.reporter.<name>.*), its factory.class checked.
  auto reporters = config::read_metric_reporters(cfg);
  if (!reporters)
    return reporters.error();
  s.prometheus_reporter = reporters->prometheus.has_value();
  if (reporters->prometheus) {
    s.prometheus_port = reporters->prometheus->port;
    s.prometheus_filter_label_values = reporters->prometheus->filter_label_values;
  }
  s.metrics_warnings = std::move(reporters->warnings);
  s.heartbeat.interval = duration_cast<milliseconds>(interval);
  s.heartbeat.timeout = duration_cast<milliseconds>(timeout);
  s.heartbeat.rpc_failure_threshold = static_cast<int>(threshold);
  if (auto ok = s.heartbeat.validate(); !ok)
    return ok.error();
  s.registration = {initial, max, error_delay, refused};
  s.rpc.ask_timeout = ask;
  s.rpc.max_frame_size = static_cast<std::size_t>(frame.bytes);
  s.inbound = rpc::inbound_limits::for_frame_size(frame.bytes);
  s.inbound.max_connections = static_cast<std::size_t>(max_connections);
  s.inbound.handshake_timeout = duration_cast<milliseconds>(handshake);
  s.inbound.max_connections_per_host = static_cast<std::size_t>(max_per_host);
  s.inbound.idle_timeout = duration_cast<milliseconds>(idle);
  s.inbound.incomplete_frames_budget = incomplete.bytes;
  auto ha = read_high_availability_settings(cfg);
  if (!ha)
    return ha.error();
  s.high_availability = std::move(*ha);
  auto tls = read_tls_settings(cfg);
  if (!tls)
    return tls.error();
  s.tls = std::move(*tls);
  // Empty: the node makes a private directory when it starts (job_manager_node).
  s.blob_storage_directory = blob_dir;
  return unit{};
}

} // namespace

expected<rpc::tls_options> read_tls_settings(const config::configuration& cfg) {
  rpc::tls_options t;
  error err;
  config::duration handshake{};
  std::filesystem::path keystore, truststore;
  std::string fingerprints;
  if (!read(cfg, opt::security_ssl_internal_enabled, t.enabled, err)
      || !read_optional(cfg, opt::security_ssl_internal_keystore, keystore, err)
      || !read_optional(cfg, opt::security_ssl_internal_truststore, truststore, err)
      || !read_optional(cfg, opt::security_ssl_internal_key_password, t.key_password, err)
      || !read(cfg, opt::security_ssl_internal_handshake_timeout, handshake, err)
      || !read_optional(cfg, opt::security_ssl_internal_cert_fingerprint, fingerprints, err)
      || !read(cfg, opt::security_ssl_protocol, t.protocol, err)
      || !read_optional(cfg, opt::security_ssl_algorithms, t.algorithms, err))
    return err;
  t.handshake_timeout = duration_cast<milliseconds>(handshake);
  for (std::size_t start = 0; start < fingerprints.size();) {
    auto end = std::min(fingerprints.find(',', start), fingerprints.size());
    auto one = fingerprints.substr(start, end - start);
    if (one.find_first_not_of(" \t") != std::string::npos)
      t.fingerprints.push_back(one);
    start = end + 1;
  }
  t.keystore = keystore.string();
  t.truststore = truststore.string();
  return t;
}

expected<high_availability_settings> read_high_availability_settings(
  const config::configuration& cfg) {
  high_availability_settings s;
  error err;
  std::string type, legacy, cluster_id, acl;
  config::duration session{}, connection{}, wait{};
  std::int64_t attempts = 0;
  if (!read(cfg, opt::high_availability_type, type, err)
      || !read_optional(cfg, opt::high_availability_legacy, legacy, err)
      || !read_optional(cfg, opt::high_availability_zookeeper_quorum, s.quorum, err)
      || !read(cfg, opt::high_availability_zookeeper_path_root, s.root, err)
      || !read(cfg, opt::high_availability_cluster_id, cluster_id, err)
      || !read_optional(cfg, opt::high_availability_storage_dir, s.storage_dir, err)
      || !read(cfg, opt::high_availability_zookeeper_session_timeout, session, err)
      || !read(cfg, opt::high_availability_zookeeper_connection_timeout, connection, err)
      || !read(cfg, opt::high_availability_zookeeper_retry_wait, wait, err)
      || !read(cfg, opt::high_availability_zookeeper_max_retry_attempts, attempts, err)
      || !read(cfg, opt::high_availability_zookeeper_client_acl, acl, err)
      || !read_optional(cfg, opt::high_availability_zookeeper_client_digest_file, s.digest_file,
                        err))
    return err;
  // The newer key wins when both are set, as in Flink.
  if (!cfg.get_raw(opt::high_availability_type.key) && !legacy.empty())
    type = legacy;
  for (auto& c : type)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  s.zookeeper = type == "zookeeper";
  while (!cluster_id.empty() && cluster_id.front() == '/')
    cluster_id.erase(cluster_id.begin());
  while (!cluster_id.empty() && cluster_id.back() == '/')
    cluster_id.pop_back();
  if (cluster_id.empty() || cluster_id.find('/') != std::string::npos)
    return make_error(
      errc::invalid_argument,
      "high-availability.cluster-id: '" + cluster_id + "' must be one non-empty path element");
  s.cluster_id = cluster_id;
  s.session_timeout = duration_cast<milliseconds>(session);
  s.connection_timeout = duration_cast<milliseconds>(connection);
  s.retry_wait = duration_cast<milliseconds>(wait);
  s.max_retry_attempts = static_cast<std::int32_t>(std::min<std::int64_t>(attempts, 1000));
  if (s.zookeeper && s.quorum.empty())
    return make_error(errc::invalid_argument,
                      "high-availability.type is ZOOKEEPER but high-availability.zookeeper.quorum "
                      "is not set (host:port,host:port)");
  s.acl = config::lower(acl) == "creator" ? ha::zookeeper_acl::creator : ha::zookeeper_acl::open;
  if (s.zookeeper && s.acl == ha::zookeeper_acl::creator && s.digest_file.empty())
    return make_error(errc::invalid_argument,
                      "high-availability.zookeeper.client.acl is creator but "
                      "high-availability.zookeeper.client.digest-file is not set: only an "
                      "authenticated ZooKeeper session can create nodes with the creator ACL "
                      "(give a file holding user:password, the same on every node)");
  return s;
}

expected<job_manager_settings> read_job_manager_settings(const config::configuration& cfg) {
  job_manager_settings s;
  if (auto ok = read_common(cfg, s); !ok)
    return ok.error();
  error err;
  if (!read(cfg, opt::jobmanager_rpc_address, s.rpc_address, err)
      || !read(cfg, opt::jobmanager_rpc_port, s.rpc_port, err)
      || !read_optional(cfg, opt::jobmanager_bind_host, s.bind_host, err)
      || !read(cfg, opt::slot_request_timeout, s.slot_request_timeout, err)
      || !read(cfg, opt::slot_idle_timeout, s.slot_idle_timeout, err)
      || !read(cfg, opt::resourcemanager_taskmanager_timeout, s.task_manager_timeout, err))
    return err;
  // Flink's HA JobManagers take their port from high-availability.jobmanager.port.
  if (s.high_availability.zookeeper
      && !read(cfg, opt::high_availability_jobmanager_port, s.rpc_port, err))
    return err;
  if (s.high_availability.zookeeper && s.high_availability.storage_dir.empty())
    return make_error(errc::invalid_argument,
                      "high-availability.storageDir must be set for ZooKeeper HA: job graphs and "
                      "job results are kept there");
  std::uint16_t rest_port = 0;
  std::string bind_port;
  std::filesystem::path upload_dir;
  if (!read(cfg, opt::rest_port, rest_port, err)
      || !read_optional(cfg, opt::rest_bind_port, bind_port, err)
      || !read_optional(cfg, opt::rest_address, s.rest.address, err)
      || !read(cfg, opt::rest_bind_address, s.rest.bind_address, err)
      || !read(cfg, opt::rest_server_max_content_length, s.rest.max_content_length, err)
      || !read_optional(cfg, opt::web_upload_dir, upload_dir, err)
      || !read(cfg, opt::web_submit_enable, s.rest.submit_enabled, err))
    return err;
  std::filesystem::path rest_keystore, rest_truststore;
  if (!read(cfg, opt::security_ssl_rest_enabled, s.rest.tls.enabled, err)
      || !read_optional(cfg, opt::security_ssl_rest_keystore, rest_keystore, err)
      || !read_optional(cfg, opt::security_ssl_rest_truststore, rest_truststore, err)
      || !read_optional(cfg, opt::security_ssl_rest_key_password, s.rest.tls.key_password, err)
      || !read(cfg, opt::security_ssl_rest_authentication_enabled,
               s.rest.tls.authentication_enabled, err)
      || !read(cfg, opt::security_ssl_protocol, s.rest.tls.protocol, err)
      || !read_optional(cfg, opt::security_ssl_algorithms, s.rest.tls.algorithms, err))
    return err;
  s.rest.tls.keystore = rest_keystore.string();
  s.rest.tls.truststore = rest_truststore.string();
  // Flink would serve plain HTTP here; a user who asked for client authentication believes
  // REST is closed to strangers.
  if (s.rest.tls.authentication_enabled && !s.rest.tls.enabled)
    return make_error(errc::invalid_argument,
                      "security.ssl.rest.authentication-enabled is true but "
                      "security.ssl.rest.enabled is not: REST would authenticate nobody");
  s.rest.enabled = true;
  s.rest.bind_port = bind_port.empty() ? std::to_string(rest_port) : bind_port;
  if (s.rest.address.empty())
    s.rest.address = s.rpc_address;
  // Empty: "flint-web-upload" in the blob storage directory the node uses.
  s.rest.upload_dir = upload_dir;
  s.configuration = cfg;
  return s;
}

expected<task_manager_settings> read_task_manager_settings(const config::configuration& cfg) {
  task_manager_settings s;
  if (auto ok = read_common(cfg, s); !ok)
    return ok.error();
  error err;
  std::int64_t slots = 1;
  if (!read(cfg, opt::jobmanager_rpc_address, s.jobmanager_address, err)
      || !read(cfg, opt::jobmanager_rpc_port, s.jobmanager_port, err)
      || !read_optional(cfg, opt::taskmanager_host, s.host, err)
      || !read_optional(cfg, opt::taskmanager_bind_host, s.bind_host, err)
      || !read(cfg, opt::taskmanager_rpc_port, s.rpc_port, err)
      || !read(cfg, opt::taskmanager_data_port, s.data_port, err)
      || !read_optional(cfg, opt::taskmanager_resource_id, s.resource_id, err)
      || !read(cfg, opt::taskmanager_number_of_task_slots, slots, err)
      || !read(cfg, opt::taskmanager_slot_timeout, s.slot_timeout, err))
    return err;
  if (slots > 100000)
    return make_error(
      errc::invalid_argument,
      "taskmanager.numberOfTaskSlots: " + std::to_string(slots) + " is more than 100000");
  s.number_of_slots = static_cast<std::int32_t>(slots);
  // The network stack reads its own keys (unknown ones are ignored).
  std::map<std::string, std::string> values;
  for (const auto& key : cfg.keys())
    values[key] = *cfg.get_raw(key);
  auto net = network::network_config::from_map(values);
  if (!net)
    return net.error();
  s.network = *net;
  return s;
}

std::string find_connecting_address(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port == 0 ? 9 : port).c_str(), &hints, &found) != 0
      || !found)
    return "127.0.0.1";
  std::string out = "127.0.0.1";
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0) {
    // connect() on UDP only picks the route and the local address; nothing is sent.
    if (connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
      sockaddr_in local{};
      socklen_t len = sizeof(local);
      char text[INET_ADDRSTRLEN] = {};
      if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0
          && inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr)
        out = text;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return out;
}

} // namespace flint::node
