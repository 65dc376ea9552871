#include "runtime/config/config_options.hpp"

#include "runtime/config/metric_reporters.hpp"

#include <cctype>

#include <algorithm>
#include <charconv>
#include <chrono>

namespace flint::config::options {

using namespace std::chrono_literals;

namespace {

const char* positive(const std::int64_t& v) {
  return v >= 1 ? nullptr : "must be at least 1";
}

const char* port(const std::int64_t& v) {
  return v >= 0 && v <= 65535 ? nullptr : "must be a port number from 0 to 65535";
}

const char* positive_or_disabled(const std::int64_t& v) {
  return v >= 1 || v == -1 ? nullptr : "must be at least 1, or -1 to disable";
}

const char* positive_duration(const duration& d) {
  return d.count() > 0 ? nullptr : "must be longer than 0";
}

bool ha_type_known(const std::string& v) {
  std::string lower;
  for (char c : v)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower == "none" || lower == "zookeeper";
}

const char* not_empty(const std::string& s) {
  return s.empty() ? "must not be empty" : nullptr;
}

const char* shared_directory(const std::filesystem::path& p) {
  return p.is_absolute() ? nullptr : relative_shared_path_problem;
}

const char* fraction(const std::string& s) {
  double v = -1;
  auto text = trim(s);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !(v >= 0.0 && v < 1.0))
    return "must be a number from 0 up to, not including, 1";
  return nullptr;
}

const char* network_memory(const memory_size& m) {
  return m.bytes >= 4096 ? nullptr : "must be at least one 4 kb segment";
}

const char* segment_size(const memory_size& m) {
  if (m.bytes < 4096)
    return "must be at least 4 kb";
  if ((m.bytes & (m.bytes - 1)) != 0)
    return "must be a power of two";
  return nullptr;
}

bool one_of_upper(const std::string& v, std::initializer_list<const char*> names) {
  std::string upper;
  for (char c : v)
    upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return upper == n; });
}

} // namespace

const config_option<std::string> jobmanager_rpc_address{
  "jobmanager.rpc.address", "localhost",
  "The JobManager's RPC host, where TaskManagers and clients connect.", not_empty};
const config_option<std::int64_t> jobmanager_rpc_port{"jobmanager.rpc.port", 6123,
                                                      "The JobManager's RPC port.", port};
const config_option<std::string> jobmanager_bind_host{
  "jobmanager.bind-host", std::nullopt,
  "The interface the JobManager binds its RPC port to (default: all interfaces).", not_empty};
const config_option<std::string> taskmanager_bind_host{
  "taskmanager.bind-host", std::nullopt,
  "The interface a TaskManager binds its RPC and data ports to (default: all interfaces).",
  not_empty};
const config_option<std::int64_t> taskmanager_rpc_port{
  "taskmanager.rpc.port", 0, "The TaskManager's RPC port (0: any free port).", port};
const config_option<std::int64_t> taskmanager_data_port{
  "taskmanager.data.port", 0, "The port of the TaskManager's data exchange (0: any free port).",
  port};
const config_option<std::string> taskmanager_resource_id{
  "taskmanager.resource-id", std::nullopt,
  "The TaskManager's resource id (default: its host:rpc-port and a random suffix).", not_empty};
const config_option<std::filesystem::path> blob_storage_directory{
  "blob.storage.directory", std::nullopt,
  "Where the blob server and the TaskManagers' blob caches keep files, a path or file:// URI; "
  "it must be a real directory of the user Flint runs as (made with mode 0700 when missing) "
  "(default: a private directory made under the system's temporary directory, removed at "
  "shutdown).",
  nullptr};
const config_option<std::vector<std::filesystem::path>> io_tmp_dirs{
  "io.tmp.dirs", std::nullopt,
  "Where BLOCKING exchanges spill, paths or file:// URIs separated by ',' or ':' (default: the "
  "system's temporary directory).",
  nullptr};
const config_option<std::string> taskmanager_host{
  "taskmanager.host", std::nullopt,
  "The address this TaskManager publishes to the JobManager (default: the local address).",
  not_empty};
const config_option<std::int64_t> taskmanager_number_of_task_slots{
  "taskmanager.numberOfTaskSlots", 1, "Slots each TaskManager offers.", positive};
const config_option<std::int64_t> parallelism_default{
  "parallelism.default", 1, "Parallelism of jobs that do not set their own.", positive};
const config_option<duration> heartbeat_interval{
  "heartbeat.interval", 10s, "Time between heartbeat requests.", positive_duration};
const config_option<duration> heartbeat_timeout{
  "heartbeat.timeout", 50s, "Time without a heartbeat after which a peer is considered dead.",
  positive_duration};
const config_option<std::int64_t> heartbeat_rpc_failure_threshold{
  "heartbeat.rpc-failure-threshold", 2,
  "Failed heartbeat RPCs in a row after which a peer is considered dead (-1: never).",
  positive_or_disabled};
const config_option<memory_size> rpc_max_frame_size{
  "rpc.max-frame-size", memory_size{128u << 20},
  "The largest RPC call an endpoint accepts; larger ones are refused unread.",
  [](const memory_size& m) -> const char* {
    return m.bytes >= 4096 ? nullptr : "must be at least 4 kb";
  }};
const config_option<duration> rpc_ask_timeout{"rpc.ask.timeout", 10s,
                                              "Default timeout of an RPC ask.", positive_duration};
const config_option<duration> slot_request_timeout{
  "slot.request.timeout", 5min, "How long a job waits for a requested slot.", positive_duration};
const config_option<duration> slot_idle_timeout{
  "slot.idle.timeout", 50s, "How long a job keeps a slot it does not use.", positive_duration};
const config_option<duration> resourcemanager_taskmanager_timeout{
  "resourcemanager.taskmanager-timeout", 30s,
  "How long the ResourceManager keeps an idle TaskManager.", positive_duration};
const config_option<duration> taskmanager_slot_timeout{
  "taskmanager.slot.timeout", 10s,
  "How long a TaskManager keeps an allocated slot no job has claimed.", positive_duration};
const config_option<std::int64_t> local_number_taskmanager{
  "local.number-taskmanager", 1, "TaskManagers an embedded local cluster starts.", positive};
const config_option<duration> execution_buffer_timeout{
  "execution.buffer-timeout", 100ms,
  "Longest time a partly filled output buffer waits before it is sent (0: after every record).",
  nullptr};
const config_option<duration> pipeline_auto_watermark_interval{
  "pipeline.auto-watermark-interval", 200ms,
  "How often periodic watermark generators emit a watermark (0: never).", nullptr};
const config_option<memory_size> taskmanager_memory_segment_size{
  "taskmanager.memory.segment-size", memory_size{32 * 1024},
  "Size of network buffers; a power of two, at least 4 kb.", segment_size};
const config_option<memory_size> taskmanager_memory_network_max{
  "taskmanager.memory.network.max", memory_size{64 * 1024 * 1024},
  "Network memory of one TaskManager: Flint's network buffer pool has exactly this much (its "
  "segments allocated on first use), as it has no total memory to take a fraction of.",
  network_memory};
const config_option<memory_size> taskmanager_memory_network_min{
  "taskmanager.memory.network.min", memory_size{64 * 1024 * 1024},
  "Flink's lower bound of network memory; checked not to exceed taskmanager.memory.network.max "
  "(Flint's pool is sized by the max).",
  network_memory};
const config_option<std::string> taskmanager_memory_network_fraction{
  "taskmanager.memory.network.fraction", "0.1",
  "Flink's share of total Flink memory for the network, from 0 to below 1; checked, not used: "
  "Flint has no total memory, so taskmanager.memory.network.max sizes the pool.",
  fraction};
const config_option<duration> cluster_registration_initial_timeout{
  "cluster.registration.initial-timeout", 100ms,
  "First timeout of a registration attempt; it doubles on each retry.", positive_duration};
const config_option<duration> cluster_registration_max_timeout{
  "cluster.registration.max-timeout", 30s, "Largest timeout of a registration attempt.",
  positive_duration};
const config_option<duration> cluster_registration_error_delay{
  "cluster.registration.error-delay", 10s, "Pause after a registration attempt failed.",
  positive_duration};
const config_option<duration> cluster_registration_refused_registration_delay{
  "cluster.registration.refused-registration-delay", 30s, "Pause after a registration was refused.",
  positive_duration};

const config_option<std::string> restart_strategy_type{
  "restart-strategy.type", std::nullopt,
  "How failed tasks restart: none (off, disable), fixed-delay, exponential-delay, failure-rate; unset: none, or fixed-delay without limit when checkpointing is on.",
  nullptr};
const config_option<std::string> restart_strategy_legacy{
  "restart-strategy", std::nullopt, "The older name of restart-strategy.type.", nullptr};
const config_option<std::string> restart_strategy_fixed_delay_attempts{
  "restart-strategy.fixed-delay.attempts", std::nullopt, "Restarts fixed-delay allows (1).",
  nullptr};
const config_option<std::string> restart_strategy_fixed_delay_delay{
  "restart-strategy.fixed-delay.delay", std::nullopt,
  "Pause before each fixed-delay restart (1 s).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_initial_backoff{
  "restart-strategy.exponential-delay.initial-backoff", std::nullopt,
  "First exponential-delay pause (1 s).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_max_backoff{
  "restart-strategy.exponential-delay.max-backoff", std::nullopt,
  "Longest exponential-delay pause (1 min).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_backoff_multiplier{
  "restart-strategy.exponential-delay.backoff-multiplier", std::nullopt,
  "Growth of the pause per failure (1.5).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_reset_backoff_threshold{
  "restart-strategy.exponential-delay.reset-backoff-threshold", std::nullopt,
  "Time without failure after which the pause starts over (1 h).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_jitter_factor{
  "restart-strategy.exponential-delay.jitter-factor", std::nullopt,
  "Random share of the pause, 0 to 1 (0.1).", nullptr};
const config_option<std::string> restart_strategy_exponential_delay_attempts_before_reset_backoff{
  "restart-strategy.exponential-delay.attempts-before-reset-backoff", std::nullopt,
  "Restarts exponential-delay allows before the pause starts over (unbounded).", nullptr};
const config_option<std::string> restart_strategy_failure_rate_max_failures_per_interval{
  "restart-strategy.failure-rate.max-failures-per-interval", std::nullopt,
  "Failures failure-rate tolerates within the interval (1).", nullptr};
const config_option<std::string> restart_strategy_failure_rate_failure_rate_interval{
  "restart-strategy.failure-rate.failure-rate-interval", std::nullopt,
  "The window failure-rate counts failures in (1 min).", nullptr};
const config_option<std::string> restart_strategy_failure_rate_delay{
  "restart-strategy.failure-rate.delay", std::nullopt,
  "Pause before each failure-rate restart (1 s).", nullptr};
const config_option<std::string> jobmanager_execution_failover_strategy{
  "jobmanager.execution.failover-strategy", std::nullopt,
  "Which tasks restart with a failed one: region (its pipelined region and what it needs) or full.",
  nullptr};
const config_option<std::string> execution_checkpointing_interval{
  "execution.checkpointing.interval", std::nullopt,
  "Time between periodic checkpoints (unset or 0: checkpointing off).", nullptr};
const config_option<std::string> execution_checkpointing_timeout{
  "execution.checkpointing.timeout", std::nullopt,
  "A checkpoint not complete by then expires (10 min).", nullptr};
const config_option<std::string> execution_checkpointing_min_pause{
  "execution.checkpointing.min-pause", std::nullopt,
  "Least time from a completed checkpoint to the next trigger (0).", nullptr};
const config_option<std::string> execution_checkpointing_max_concurrent{
  "execution.checkpointing.max-concurrent-checkpoints", std::nullopt,
  "Checkpoints in progress at once (1).", nullptr};
const config_option<std::string> execution_checkpointing_mode{
  "execution.checkpointing.mode", std::nullopt, "EXACTLY_ONCE (aligned barriers) or AT_LEAST_ONCE.",
  nullptr};
const config_option<std::string> execution_checkpointing_tolerable_failures{
  "execution.checkpointing.tolerable-failed-checkpoints", std::nullopt,
  "Consecutive failed checkpoints a job survives (0).", nullptr};
const config_option<std::string> execution_checkpointing_externalized_retention{
  "execution.checkpointing.externalized-checkpoint-retention", std::nullopt,
  "NO_EXTERNALIZED_CHECKPOINTS, DELETE_ON_CANCELLATION or RETAIN_ON_CANCELLATION.", nullptr};
const config_option<std::string> state_checkpoints_num_retained{
  "state.checkpoints.num-retained", std::nullopt, "Completed checkpoints kept (1).", nullptr};
const config_option<std::filesystem::path> state_checkpoints_dir{
  "state.checkpoints.dir", std::nullopt,
  "Where checkpoints are written: <dir>/<job id>/chk-<n>/_metadata; an absolute path or "
  "file:/// URI every node sees (unset: the JobManager's memory).",
  shared_directory};
const config_option<std::filesystem::path> state_savepoints_dir{
  "state.savepoints.dir", std::nullopt,
  "Where `flint savepoint` and `flint stop` put savepoints when given no directory; an absolute "
  "path or file:/// URI every node sees.",
  shared_directory};
const config_option<std::string> state_backend_type{
  "state.backend.type", std::nullopt,
  "Where keyed state lives: hashmap (the heap) or rocksdb (RocksDB on local disk).", nullptr};
const config_option<std::string> state_backend_incremental{
  "state.backend.incremental", std::nullopt,
  "RocksDB checkpoints upload only the SST files the last completed one lacks (false).", nullptr};
const config_option<memory_size> state_backend_rocksdb_cache_size{
  "state.backend.rocksdb.cache.size", memory_size{64 << 20},
  "Flint's cache of hot keyed state entries in front of RocksDB (reads served, writes written "
  "back in batches when it fills and before each snapshot); 0 turns it off.",
  nullptr};
const config_option<bool> state_backend_rocksdb_memory_managed{
  "state.backend.rocksdb.memory.managed", true,
  "RocksDB's block cache and write buffers share one bounded budget (memory.fixed-per-slot).",
  nullptr};
const config_option<memory_size> state_backend_rocksdb_memory_fixed_per_slot{
  "state.backend.rocksdb.memory.fixed-per-slot", std::nullopt,
  "RocksDB's memory budget per state backend when memory.managed (256 mb).", nullptr};
const config_option<memory_size> state_backend_rocksdb_block_cache_size{
  "state.backend.rocksdb.block.cache-size", memory_size{8 << 20},
  "RocksDB's block cache when memory.managed is false.", nullptr};
const config_option<memory_size> state_backend_rocksdb_writebuffer_size{
  "state.backend.rocksdb.writebuffer.size", memory_size{64 << 20},
  "RocksDB's memtable size when memory.managed is false.", nullptr};
const config_option<std::string> state_backend_rocksdb_compaction_style{
  "state.backend.rocksdb.compaction.style", std::string("LEVEL"),
  "RocksDB's compaction: LEVEL, UNIVERSAL or FIFO.",
  [](const std::string& v) -> const char* {
    return one_of_upper(v, {"LEVEL", "UNIVERSAL", "FIFO"}) ? nullptr
                                                           : "must be LEVEL, UNIVERSAL or FIFO";
  }};
const config_option<std::string> state_backend_rocksdb_predefined_options{
  "state.backend.rocksdb.predefined-options", std::string("DEFAULT"),
  "Flink's RocksDB presets: DEFAULT, SPINNING_DISK_OPTIMIZED, SPINNING_DISK_OPTIMIZED_HIGH_MEM "
  "or FLASH_SSD_OPTIMIZED (keys set explicitly win).",
  [](const std::string& v) -> const char* {
    return one_of_upper(v, {"DEFAULT", "SPINNING_DISK_OPTIMIZED",
                            "SPINNING_DISK_OPTIMIZED_HIGH_MEM", "FLASH_SSD_OPTIMIZED"})
      ? nullptr
      : "must be DEFAULT, SPINNING_DISK_OPTIMIZED, SPINNING_DISK_OPTIMIZED_HIGH_MEM or "
        "FLASH_SSD_OPTIMIZED";
  }};
const config_option<std::string> web_exception_history_size{
  "web.exception-history-size", std::nullopt,
  "Failures each job keeps in its exception history (16).", nullptr};
const config_option<std::string> high_availability_type{
  "high-availability.type", std::string("NONE"),
  "NONE (leaders fixed by jobmanager.rpc.address) or ZOOKEEPER (standby JobManagers).",
  [](const std::string& v) -> const char* {
    return ha_type_known(v) ? nullptr : "must be NONE or ZOOKEEPER";
  }};
const config_option<std::string> high_availability_legacy{
  "high-availability", std::nullopt, "The older name of high-availability.type.",
  [](const std::string& v) -> const char* {
    return ha_type_known(v) ? nullptr : "must be NONE or ZOOKEEPER";
  }};
const config_option<std::string> high_availability_zookeeper_quorum{
  "high-availability.zookeeper.quorum", std::nullopt, "The ZooKeeper servers, host:port,host:port.",
  nullptr};
const config_option<std::string> high_availability_zookeeper_path_root{
  "high-availability.zookeeper.path.root", std::string("/flink"),
  "The root node of the HA data in ZooKeeper.", nullptr};
const config_option<std::string> high_availability_cluster_id{
  "high-availability.cluster-id", std::string("/default"),
  "The cluster's node under the root (distinct per cluster sharing a ZooKeeper).", nullptr};
const config_option<std::filesystem::path> high_availability_storage_dir{
  "high-availability.storageDir", std::nullopt,
  "Where job graphs and job results are kept; an absolute path or file:/// URI every JobManager "
  "sees.",
  shared_directory};
const config_option<duration> high_availability_zookeeper_session_timeout{
  "high-availability.zookeeper.client.session-timeout", 60s,
  "The ZooKeeper session timeout: leadership is lost after this long without ZooKeeper.",
  positive_duration};
const config_option<duration> high_availability_zookeeper_connection_timeout{
  "high-availability.zookeeper.client.connection-timeout", 15s,
  "How long one attempt to connect to ZooKeeper waits.", positive_duration};
const config_option<duration> high_availability_zookeeper_retry_wait{
  "high-availability.zookeeper.client.retry-wait", 5s,
  "Pause between two attempts to connect to ZooKeeper.", positive_duration};
const config_option<std::int64_t> high_availability_jobmanager_port{
  "high-availability.jobmanager.port", 0,
  "The JobManager's RPC port with HA, in place of jobmanager.rpc.port (0: any free port).",
  [](const std::int64_t& v) -> const char* {
    return v >= 0 && v <= 65535 ? nullptr : "must be a port number (0: any)";
  }};
const config_option<std::int64_t> high_availability_zookeeper_max_retry_attempts{
  "high-availability.zookeeper.client.max-retry-attempts", 3,
  "Attempts to connect to ZooKeeper before giving up.",
  [](const std::int64_t& v) -> const char* { return v >= 1 ? nullptr : "must be at least 1"; }};
const config_option<std::string> high_availability_zookeeper_client_acl{
  "high-availability.zookeeper.client.acl", std::string("open"),
  "The ACL of the nodes Flint creates in ZooKeeper: open (anyone may change them, Flink's "
  "default) or creator (only sessions authenticated with the same digest, from "
  "high-availability.zookeeper.client.digest-file).",
  [](const std::string& v) -> const char* {
    return lower(v) == "open" || lower(v) == "creator" ? nullptr : "must be open or creator";
  }};
const config_option<std::filesystem::path> high_availability_zookeeper_client_digest_file{
  "high-availability.zookeeper.client.digest-file", std::nullopt,
  "A file holding user:password for ZooKeeper's digest authentication (where Flink logs in "
  "through SASL/JAAS); required with the creator ACL, the same on every node; readable by the "
  "Flint user only.",
  nullptr};

const config_option<bool> security_ssl_internal_enabled{
  "security.ssl.internal.enabled", false,
  "Mutual TLS on every connection between nodes and clients (keystore and truststore).", nullptr};
const config_option<std::filesystem::path> security_ssl_internal_keystore{
  "security.ssl.internal.keystore", std::nullopt,
  "This node's or client's certificate and private key, one PEM file.", nullptr};
const config_option<std::filesystem::path> security_ssl_internal_truststore{
  "security.ssl.internal.truststore", std::nullopt, "The cluster CA's certificate, PEM.", nullptr};
const config_option<std::string> security_ssl_internal_key_password{
  "security.ssl.internal.key-password", std::nullopt, "The private key's passphrase.", nullptr};
const config_option<duration> security_ssl_internal_handshake_timeout{
  "security.ssl.internal.handshake-timeout", 10s,
  "A connection that has not completed its TLS handshake by then is closed.", positive_duration};
const config_option<std::string> security_ssl_internal_cert_fingerprint{
  "security.ssl.internal.cert.fingerprint", std::nullopt,
  "Comma-separated SHA-256 (or, as Flink's, SHA-1) fingerprints of the certificates a peer may "
  "present; any other is refused even if the CA signed it (hex, colons optional).",
  nullptr};
const config_option<std::string> security_ssl_protocol{
  "security.ssl.protocol", "TLSv1.2",
  "The TLS version every connection speaks: TLSv1.2 (Flink's default) or TLSv1.3.",
  [](const std::string& v) -> const char* {
    return v == "TLSv1.2" || v == "TLSv1.3" ? nullptr : "must be TLSv1.2 or TLSv1.3";
  }};
const config_option<std::string> security_ssl_algorithms{
  "security.ssl.algorithms", std::nullopt,
  "Comma-separated cipher suites (IANA names as Flink's, or OpenSSL's); unset: OpenSSL's "
  "defaults for the protocol.",
  nullptr};
const config_option<std::string> metrics_reporter_prom_factory_class{
  "metrics.reporter.prom.factory.class", std::nullopt,
  "Set (to org.apache.flink.metrics.prometheus.PrometheusReporterFactory) to start the "
  "Prometheus reporter on every node.",
  nullptr};
const config_option<std::string> metrics_reporter_prom_port{
  "metrics.reporter.prom.port", "9249",
  "The Prometheus reporter's port, or a range (9250-9260) when nodes share a host.", not_empty};
const config_option<std::int64_t> rest_port{
  "rest.port", 8081, "The REST endpoint's port (what clients connect to; 0: any free port).", port};
const config_option<std::string> rest_bind_port{
  "rest.bind-port", std::nullopt,
  "The port or range (50100-50200) the REST server binds (default: rest.port).", not_empty};
const config_option<std::string> rest_address{
  "rest.address", std::nullopt,
  "The address clients use for the REST endpoint (default: jobmanager.rpc.address).", not_empty};
const config_option<std::string> rest_bind_address{
  "rest.bind-address", "localhost",
  "The interface the REST server binds (localhost, as Flink's shipped configuration; 0.0.0.0 "
  "for all).",
  not_empty};
const config_option<std::int64_t> rest_server_max_content_length{
  "rest.server.max-content-length", 104857600,
  "The largest request body the REST server accepts, in bytes (a larger upload gets 413).",
  positive};
const config_option<std::filesystem::path> web_upload_dir{
  "web.upload.dir", std::nullopt,
  "Where uploaded job libraries are kept (default: flint-web-upload in the blob storage "
  "directory).",
  nullptr};
const config_option<bool> web_submit_enable{
  "web.submit.enable", true, "Whether job libraries can be uploaded and run through REST.",
  nullptr};
const config_option<bool> security_ssl_rest_enabled{
  "security.ssl.rest.enabled", false, "HTTPS on the REST endpoint (keystore required).", nullptr};
const config_option<std::filesystem::path> security_ssl_rest_keystore{
  "security.ssl.rest.keystore", std::nullopt,
  "The REST endpoint's certificate and private key, one PEM file.", nullptr};
const config_option<std::filesystem::path> security_ssl_rest_truststore{
  "security.ssl.rest.truststore", std::nullopt,
  "The CA certificate that signs REST clients' certificates, PEM (with authentication).",
  nullptr};
const config_option<std::string> security_ssl_rest_key_password{
  "security.ssl.rest.key-password", std::nullopt,
  "The passphrase of the REST keystore's private key.", nullptr};
const config_option<bool> security_ssl_rest_authentication_enabled{
  "security.ssl.rest.authentication-enabled", false,
  "Mutual TLS on REST: a client without a certificate the truststore signed is refused in the "
  "handshake. With security.ssl.internal.enabled, REST changes nothing without it (403).",
  nullptr};
const config_option<std::int64_t> rpc_max_connections{
  "rpc.max-connections", 1024,
  "The most connections a node accepts at once on its RPC and data ports; one more is closed "
  "as it is accepted.",
  positive};
const config_option<duration> rpc_handshake_timeout{
  "rpc.handshake-timeout", 10s,
  "An accepted connection whose RPC handshake has not arrived by then is closed.",
  positive_duration};
const config_option<std::int64_t> rpc_max_connections_per_host{
  "rpc.max-connections-per-host", 128,
  "The most connections a node accepts at once from one peer address (loopback included) on "
  "its RPC and data ports; one more is closed as it is accepted.",
  positive};
const config_option<duration> rpc_idle_timeout{
  "rpc.idle-timeout", 0s,
  "After its RPC handshake, an accepted connection that sent nothing for this long is closed; "
  "0 never (the default: CAF's own heartbeats are off, and a data connection between stages or "
  "a waiting client may stay silent for long).",
  [](const duration& d) -> const char* { return d.count() >= 0 ? nullptr : "must not be negative"; }};
const config_option<memory_size> rpc_max_incomplete_frames_size{
  "rpc.max-incomplete-frames-size", memory_size{1u << 30},
  "The payload bytes the incomplete frames of all accepted connections may claim at once (each "
  "is allocated when its header arrives); a connection whose frame would pass it is closed. "
  "Never less than one frame of rpc.max-frame-size.",
  [](const memory_size& m) -> const char* {
    return m.bytes >= 1 ? nullptr : "must be at least 1 b";
  }};

namespace {

template <class T>
std::string default_text(const config_option<T>& o) {
  if (!o.default_value)
    return {};
  configuration c;
  c.set(o, *o.default_value);
  return *c.get_raw(o.key);
}

/// A captureless validator per option object, so option_info stays a plain struct.
template <const auto& Option>
expected<unit> validate_one(const configuration& cfg) {
  auto found = cfg.find(Option);
  if (!found)
    return found.error();
  return unit{};
}

template <const auto& Option>
option_info info() {
  return option_info{Option.key, default_text(Option), Option.description, &validate_one<Option>};
}

} // namespace

const std::vector<option_info>& all() {
  static const std::vector<option_info> list = {
    info<jobmanager_rpc_address>(),
    info<jobmanager_rpc_port>(),
    info<jobmanager_bind_host>(),
    info<taskmanager_host>(),
    info<taskmanager_bind_host>(),
    info<taskmanager_rpc_port>(),
    info<taskmanager_data_port>(),
    info<taskmanager_resource_id>(),
    info<blob_storage_directory>(),
    info<io_tmp_dirs>(),
    info<taskmanager_number_of_task_slots>(),
    info<parallelism_default>(),
    info<heartbeat_interval>(),
    info<heartbeat_timeout>(),
    info<heartbeat_rpc_failure_threshold>(),
    info<rpc_ask_timeout>(),
    info<rpc_max_frame_size>(),
    info<slot_request_timeout>(),
    info<slot_idle_timeout>(),
    info<resourcemanager_taskmanager_timeout>(),
    info<taskmanager_slot_timeout>(),
    info<local_number_taskmanager>(),
    info<execution_buffer_timeout>(),
    info<pipeline_auto_watermark_interval>(),
    info<taskmanager_memory_segment_size>(),
    info<taskmanager_memory_network_max>(),
    info<taskmanager_memory_network_min>(),
    info<taskmanager_memory_network_fraction>(),
    info<cluster_registration_initial_timeout>(),
    info<cluster_registration_max_timeout>(),
    info<cluster_registration_error_delay>(),
    info<cluster_registration_refused_registration_delay>(),
    info<restart_strategy_type>(),
    info<restart_strategy_legacy>(),
    info<restart_strategy_fixed_delay_attempts>(),
    info<restart_strategy_fixed_delay_delay>(),
    info<restart_strategy_exponential_delay_initial_backoff>(),
    info<restart_strategy_exponential_delay_max_backoff>(),
    info<restart_strategy_exponential_delay_backoff_multiplier>(),
    info<restart_strategy_exponential_delay_reset_backoff_threshold>(),
    info<restart_strategy_exponential_delay_jitter_factor>(),
    info<restart_strategy_exponential_delay_attempts_before_reset_backoff>(),
    info<restart_strategy_failure_rate_max_failures_per_interval>(),
    info<restart_strategy_failure_rate_failure_rate_interval>(),
    info<restart_strategy_failure_rate_delay>(),
    info<jobmanager_execution_failover_strategy>(),
    info<web_exception_history_size>(),
    info<execution_checkpointing_interval>(),
    info<execution_checkpointing_timeout>(),
    info<execution_checkpointing_min_pause>(),
    info<execution_checkpointing_max_concurrent>(),
    info<execution_checkpointing_mode>(),
    info<execution_checkpointing_tolerable_failures>(),
    info<execution_checkpointing_externalized_retention>(),
    info<state_checkpoints_num_retained>(),
    info<state_checkpoints_dir>(),
    info<state_savepoints_dir>(),
    info<state_backend_type>(),
    info<state_backend_incremental>(),
    info<state_backend_rocksdb_cache_size>(),
    info<state_backend_rocksdb_memory_managed>(),
    info<state_backend_rocksdb_memory_fixed_per_slot>(),
    info<state_backend_rocksdb_block_cache_size>(),
    info<state_backend_rocksdb_writebuffer_size>(),
    info<state_backend_rocksdb_compaction_style>(),
    info<state_backend_rocksdb_predefined_options>(),
    info<high_availability_type>(),
    info<high_availability_legacy>(),
    info<high_availability_zookeeper_quorum>(),
    info<high_availability_zookeeper_path_root>(),
    info<high_availability_cluster_id>(),
    info<high_availability_storage_dir>(),
    info<high_availability_zookeeper_session_timeout>(),
    info<high_availability_zookeeper_connection_timeout>(),
    info<high_availability_zookeeper_retry_wait>(),
    info<high_availability_zookeeper_max_retry_attempts>(),
    info<high_availability_zookeeper_client_acl>(),
    info<high_availability_zookeeper_client_digest_file>(),
    info<high_availability_jobmanager_port>(),
    info<security_ssl_internal_enabled>(),
    info<security_ssl_internal_keystore>(),
    info<security_ssl_internal_truststore>(),
    info<security_ssl_internal_key_password>(),
    info<security_ssl_internal_handshake_timeout>(),
    info<security_ssl_internal_cert_fingerprint>(),
    info<security_ssl_protocol>(),
    info<security_ssl_algorithms>(),
    info<rpc_max_connections>(),
    info<rpc_handshake_timeout>(),
    info<rpc_max_connections_per_host>(),
    info<rpc_idle_timeout>(),
    info<rpc_max_incomplete_frames_size>(),
    info<metrics_reporter_prom_factory_class>(),
    info<metrics_reporter_prom_port>(),
    info<rest_port>(),
    info<rest_bind_port>(),
    info<rest_address>(),
    info<rest_bind_address>(),
    info<rest_server_max_content_length>(),
    info<web_upload_dir>(),
    info<web_submit_enable>(),
    info<security_ssl_rest_enabled>(),
    info<security_ssl_rest_keystore>(),
    info<security_ssl_rest_truststore>(),
    info<security_ssl_rest_key_password>(),
    info<security_ssl_rest_authentication_enabled>(),
  };
  return list;
}

} // namespace flint::config::options

namespace flint::config {

expected<unit> validate(const configuration& cfg) {
  for (const auto& o : options::all())
    if (auto ok = o.validate(cfg); !ok)
      return ok.error();
  // Only a min that is set: Flint's pool may be smaller than Flink's 64 mb default minimum.
  auto network_min = cfg.find(options::taskmanager_memory_network_min);
  auto network_max = cfg.get(options::taskmanager_memory_network_max);
  if (network_min && *network_min && network_max && (*network_min)->bytes > network_max->bytes)
    return make_error(errc::invalid_argument,
                      "taskmanager.memory.network.min (" + format_memory_size(**network_min)
                        + ") must not be larger than taskmanager.memory.network.max ("
                        + format_memory_size(*network_max) + ")");
  auto interval = cfg.get(options::heartbeat_interval);
  auto timeout = cfg.get(options::heartbeat_timeout);
  if (interval && timeout && *timeout < *interval)
    return make_error(errc::invalid_argument,
                      "heartbeat.timeout (" + format_duration(*timeout)
                        + ") must not be shorter than heartbeat.interval ("
                        + format_duration(*interval) + ")");
  return unit{};
}

std::vector<std::string> unknown_keys(const configuration& cfg) {
  std::vector<std::string> out;
  const auto& known = options::all();
  const auto& aliases = key_aliases();
  for (const auto& key : cfg.keys())
    if (std::none_of(known.begin(), known.end(), [&](const auto& o) { return o.key == key; })
        && std::none_of(aliases.begin(), aliases.end(), [&](const auto& a) { return a.name == key; })
        && !is_metric_reporter_key(key))
      out.push_back(key);
  return out;
}

const std::vector<key_alias>& key_aliases() {
  static const std::vector<key_alias> list = {
    {"pekko.ask.timeout", options::rpc_ask_timeout.key, false},
    {"pekko.framesize", options::rpc_max_frame_size.key, false},
    {"execution.checkpointing.dir", options::state_checkpoints_dir.key, true},
    {"execution.checkpointing.savepoint-dir", options::state_savepoints_dir.key, true},
    {"execution.checkpointing.num-retained", options::state_checkpoints_num_retained.key, true},
    {"execution.checkpointing.incremental", options::state_backend_incremental.key, true},
    {"execution.buffer-timeout.interval", options::execution_buffer_timeout.key, true},
  };
  return list;
}

std::vector<std::string> resolve_aliases(configuration& cfg) {
  std::vector<std::string> warnings;
  for (const auto& alias : key_aliases()) {
    auto value = cfg.get_raw(alias.name);
    bool read_as_set = cfg.contains(alias.read_as);
    if (alias.name_is_current && read_as_set)
      warnings.push_back("Config uses deprecated configuration key '" + alias.read_as
                         + "' instead of proper key '" + alias.name + "'");
    if (value && (alias.name_is_current || !read_as_set))
      cfg.set(alias.read_as, *value, cfg.origin(alias.name));
  }
  return warnings;
}

} // namespace flint::config
