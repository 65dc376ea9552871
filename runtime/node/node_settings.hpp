#pragma once
/// What a JobManager or TaskManager process reads from its configuration (Flink's
/// ClusterEntrypoint / TaskManagerRunner read the same keys), as typed values. Read once at
/// start: a bad value fails the node before anything is spawned.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/registration/retrying_registration.hpp"
#include "runtime/actors/rpc/rpc_config.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/rest/rest_tls.hpp"

namespace flint::node {

/// `high-availability.*` (Flink's HighAvailabilityOptions).
struct high_availability_settings {
  /// `high-availability.type` (or the older `high-availability`) is ZOOKEEPER.
  bool zookeeper = false;
  std::string quorum;
  std::string root = "/flink";
  /// Without Flink's leading '/'.
  std::string cluster_id = "default";
  /// `high-availability.storageDir`: required for a JobManager with ZooKeeper HA.
  std::filesystem::path storage_dir;
  std::chrono::milliseconds session_timeout{60000};
  std::chrono::milliseconds connection_timeout{15000};
  std::chrono::milliseconds retry_wait{5000};
  std::int32_t max_retry_attempts = 3;
  /// `high-availability.zookeeper.client.acl`: the ACL of every node this process creates.
  ha::zookeeper_acl acl = ha::zookeeper_acl::open;
  /// `high-availability.zookeeper.client.digest-file`: "user:password" for the digest scheme,
  /// read at connect (connect_zookeeper); set whenever `acl` is creator.
  std::filesystem::path digest_file;
};

/// Settings both roles share.
struct common_settings {
  high_availability_settings high_availability;
  /// `security.ssl.internal.*`: mutual TLS on every connection.
  rpc::tls_options tls;
  /// `rpc.max-connections`, `rpc.max-connections-per-host`, `rpc.handshake-timeout`,
  /// `rpc.idle-timeout`, `rpc.max-incomplete-frames-size`; the frame bound from
  /// `rpc.max-frame-size`.
  rpc::inbound_limits inbound;
  /// `heartbeat.interval`, `heartbeat.timeout`, `heartbeat.rpc-failure-threshold`.
  heartbeat::heartbeat_config heartbeat;
  /// `cluster.registration.*`.
  registration::retrying_registration_config registration;
  /// `rpc.ask.timeout`.
  rpc::rpc_config rpc;
  /// `blob.storage.directory`: this user's real directory (made with mode 0700 when missing; a
  /// symbolic link or another user's directory is refused). Empty (the default): a private
  /// directory the node makes under the system's temporary directory with mkdtemp and removes at
  /// shutdown. A TaskManager keeps its job library cache in `<it>/<resource id>`.
  std::filesystem::path blob_storage_directory;
  /// A `metrics.reporter.<name>.factory.class` naming Flink's PrometheusReporterFactory: the
  /// Prometheus reporter runs at `metrics.reporter.<name>.port` (a port or a range), label values
  /// filtered unless `filterLabelValueCharacters` is false (config/metric_reporters.hpp).
  bool prometheus_reporter = false;
  std::string prometheus_port = "9249";
  bool prometheus_filter_label_values = true;
  /// Reporters that do not start, and why: logged at start.
  std::vector<std::string> metrics_warnings;
};

/// `rest.*` and `web.*` (Flink's RestOptions, WebOptions): the JobManager's REST endpoint and
/// dashboard.
struct rest_settings {
  /// Read from a configuration: on (Flink's JobManager always serves REST). A settings value
  /// built in code (in-process nodes of tests) leaves it off unless asked.
  bool enabled = false;
  /// `rest.bind-address` ("0.0.0.0": all interfaces).
  std::string bind_address = "localhost";
  /// `rest.bind-port`, else `rest.port`: a port, a range, or "0" for any.
  std::string bind_port = "8081";
  /// `rest.address`, else `jobmanager.rpc.address`: what the ready line and logs show.
  std::string address;
  /// `rest.server.max-content-length`.
  std::int64_t max_content_length = 104857600;
  /// `web.upload.dir`; empty: flint-web-upload in the blob storage directory the node uses.
  std::filesystem::path upload_dir;
  /// `web.submit.enable`.
  bool submit_enabled = true;
  /// The node's log file (`flint-node --log-file`), which REST's /jobmanager/log and /logs
  /// serve; empty: the node logs to its standard error and serves no log files.
  std::filesystem::path log_file;
  /// `security.ssl.rest.*`: HTTPS and, with authentication, mutual TLS. Without it, a node with
  /// `security.ssl.internal.enabled` serves only reads through REST.
  rest::rest_tls_options tls;
};

struct job_manager_settings : common_settings {
  /// `jobmanager.rpc.address`: the host TaskManagers and clients use.
  std::string rpc_address = "localhost";
  /// `jobmanager.rpc.port` (0: any free port, for tests); with ZooKeeper HA
  /// `high-availability.jobmanager.port` (default 0).
  std::uint16_t rpc_port = 6123;
  /// `jobmanager.bind-host` ("": all interfaces).
  std::string bind_host;
  /// `slot.request.timeout`, `slot.idle.timeout`, `resourcemanager.taskmanager-timeout`.
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  std::chrono::nanoseconds slot_idle_timeout = std::chrono::seconds(50);
  std::chrono::nanoseconds task_manager_timeout = std::chrono::seconds(30);
  rest_settings rest;
  /// The whole configuration, for what each job reads at its start (`restart-strategy.*`,
  /// `jobmanager.execution.failover-strategy`).
  config::configuration configuration;
};

struct task_manager_settings : common_settings {
  /// Where the JobManager is (`jobmanager.rpc.address`, `jobmanager.rpc.port`).
  std::string jobmanager_address = "localhost";
  std::uint16_t jobmanager_port = 6123;
  /// `taskmanager.host`: the address published to the JobManager and to other TaskManagers'
  /// tasks; empty: the local address that reaches the JobManager (Flink's
  /// ConnectionUtils.findConnectingAddress).
  std::string host;
  /// `taskmanager.bind-host` ("": all interfaces).
  std::string bind_host;
  /// `taskmanager.rpc.port`, `taskmanager.data.port` (0: any free port).
  std::uint16_t rpc_port = 0;
  std::uint16_t data_port = 0;
  /// `taskmanager.resource-id`; empty: host:rpc-port and a random suffix.
  std::string resource_id;
  /// `taskmanager.numberOfTaskSlots`.
  std::int32_t number_of_slots = 1;
  /// `taskmanager.slot.timeout`.
  std::chrono::nanoseconds slot_timeout = std::chrono::seconds(10);
  /// `taskmanager.memory.segment-size`, `execution.buffer-timeout`, `taskmanager.network.*`.
  network::network_config network;
  /// The node's log file (`flint-node --log-file`, or where its standard error goes): its
  /// directory's files, it and its `.out` sibling are what REST's /taskmanagers/:id/logs, /log
  /// and /stdout show. Empty: it logs to a terminal or pipe and has none.
  std::filesystem::path log_file;
};

/// Reads `security.ssl.internal.*` (nodes and the CLI read the same keys).
expected<rpc::tls_options> read_tls_settings(const config::configuration& cfg);

/// Reads `high-availability.*` (a quorum is required with ZooKeeper).
expected<high_availability_settings> read_high_availability_settings(
  const config::configuration& cfg);

/// Reads the JobManager's settings from `cfg` (defaults for unset keys).
expected<job_manager_settings> read_job_manager_settings(const config::configuration& cfg);
/// Reads a TaskManager's settings from `cfg` (defaults for unset keys).
expected<task_manager_settings> read_task_manager_settings(const config::configuration& cfg);

/// The local address of the interface that reaches host:port (no packet is sent: a UDP socket
/// is connected and asked for its name); "127.0.0.1" when the host is loopback or cannot be
/// resolved.
std::string find_connecting_address(const std::string& host, std::uint16_t port);

} // namespace flint::node
