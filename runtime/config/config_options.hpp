#pragma once
/// The options Flint reads, with Flink's key names, defaults and meanings (Flink's
/// JobManagerOptions, TaskManagerOptions, HeartbeatManagerOptions, … in one place). Components
/// take typed values from these in main(); nothing reads the configuration behind their backs.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/config/configuration.hpp"

namespace flint::config::options {

/// The JobManager's RPC host, where TaskManagers and clients connect.
extern const config_option<std::string> jobmanager_rpc_address;
/// The JobManager's RPC port.
extern const config_option<std::int64_t> jobmanager_rpc_port;
/// The interface the JobManager binds its RPC port to; no default (all interfaces).
extern const config_option<std::string> jobmanager_bind_host;
/// The address a TaskManager publishes; no default (Flink derives it from the connection).
extern const config_option<std::string> taskmanager_host;
/// The interface a TaskManager binds its RPC and data ports to; no default (all interfaces).
extern const config_option<std::string> taskmanager_bind_host;
/// The TaskManager's RPC port (0: any free port).
extern const config_option<std::int64_t> taskmanager_rpc_port;
/// The port of the TaskManager's data exchange (0: any free port).
extern const config_option<std::int64_t> taskmanager_data_port;
/// The TaskManager's resource id; no default (host:port and a random suffix).
extern const config_option<std::string> taskmanager_resource_id;
/// Where the blob server and the TaskManagers' blob caches keep files; no default (a private
/// directory under the system's temporary directory, made at start and removed at shutdown).
extern const config_option<std::filesystem::path> blob_storage_directory;
/// Where BLOCKING exchanges spill (Flink's CoreOptions.TMP_DIRS); no default (the system's
/// temporary directory). The network stack reads it (network_config).
extern const config_option<std::vector<std::filesystem::path>> io_tmp_dirs;
/// Slots each TaskManager offers.
extern const config_option<std::int64_t> taskmanager_number_of_task_slots;
/// Parallelism of jobs that do not set their own.
extern const config_option<std::int64_t> parallelism_default;
/// Time between heartbeat requests.
extern const config_option<duration> heartbeat_interval;
/// Time without a heartbeat after which a peer is considered dead.
extern const config_option<duration> heartbeat_timeout;
/// Consecutive failed heartbeat RPCs after which a peer is considered dead (-1: never).
extern const config_option<std::int64_t> heartbeat_rpc_failure_threshold;
/// The largest RPC call an endpoint accepts (Flink's akka.framesize).
extern const config_option<memory_size> rpc_max_frame_size;
/// Default timeout of an ask.
extern const config_option<duration> rpc_ask_timeout;
/// How long a SlotPool waits for a requested slot before failing the request.
extern const config_option<duration> slot_request_timeout;
/// How long a SlotPool keeps an unused slot before releasing it.
extern const config_option<duration> slot_idle_timeout;
/// How long the ResourceManager keeps an idle TaskManager.
extern const config_option<duration> resourcemanager_taskmanager_timeout;
/// How long a TaskExecutor keeps an allocated slot no JobMaster has claimed.
extern const config_option<duration> taskmanager_slot_timeout;
/// TaskManagers a local (embedded) cluster starts.
extern const config_option<std::int64_t> local_number_taskmanager;
/// Longest time a partly filled output buffer waits before it is flushed.
extern const config_option<duration> execution_buffer_timeout;
extern const config_option<duration> pipeline_auto_watermark_interval;
/// Size of the network buffers (memory segments); a power of two, at least 4 kb.
extern const config_option<memory_size> taskmanager_memory_segment_size;
/// Flink's taskmanager.memory.network.*: `max` is the network memory of one TaskManager (the
/// network stack reads it, network_config); `min` is checked not to exceed it and `fraction`
/// checked for range, as Flint has no total memory to share out.
extern const config_option<memory_size> taskmanager_memory_network_max;
extern const config_option<memory_size> taskmanager_memory_network_min;
extern const config_option<std::string> taskmanager_memory_network_fraction;
/// First timeout of a registration attempt (doubles on each retry).
extern const config_option<duration> cluster_registration_initial_timeout;
/// Largest timeout of a registration attempt.
extern const config_option<duration> cluster_registration_max_timeout;
/// Pause after a registration attempt failed with an error.
extern const config_option<duration> cluster_registration_error_delay;
/// Pause after a registration was refused.
extern const config_option<duration> cluster_registration_refused_registration_delay;
/// NONE (standalone: leaders fixed by jobmanager.rpc.address) or ZOOKEEPER.
extern const config_option<std::string> high_availability_type;
/// The older name of high-availability.type.
extern const config_option<std::string> high_availability_legacy;
/// The ZooKeeper servers, "host:port,host:port".
extern const config_option<std::string> high_availability_zookeeper_quorum;
/// The root node of every cluster's HA data in ZooKeeper.
extern const config_option<std::string> high_availability_zookeeper_path_root;
/// The cluster's node under the root (clusters sharing a ZooKeeper need distinct ids).
extern const config_option<std::string> high_availability_cluster_id;
/// Where job graphs and job results are kept (a directory every JobManager can read: absolute).
extern const config_option<std::filesystem::path> high_availability_storage_dir;
/// The ZooKeeper session timeout: leadership ends when the session is lost for this long.
extern const config_option<duration> high_availability_zookeeper_session_timeout;
/// How long one attempt to connect to ZooKeeper waits.
extern const config_option<duration> high_availability_zookeeper_connection_timeout;
/// Pause between two attempts to connect to ZooKeeper.
extern const config_option<duration> high_availability_zookeeper_retry_wait;
/// The JobManager's RPC port with HA, in place of jobmanager.rpc.port (0: any free port, so
/// several JobManagers share a host).
extern const config_option<std::int64_t> high_availability_jobmanager_port;
/// Attempts to connect to ZooKeeper before giving up.
extern const config_option<std::int64_t> high_availability_zookeeper_max_retry_attempts;
/// Flink's ZooKeeper ACL mode for the nodes Flint creates: open (default) or creator.
extern const config_option<std::string> high_availability_zookeeper_client_acl;
/// A file holding "user:password" for ZooKeeper's digest scheme (Flint's stand-in for Flink's
/// SASL login); required with the creator ACL. The secret never enters the configuration.
extern const config_option<std::filesystem::path> high_availability_zookeeper_client_digest_file;

/// Mutual TLS on every connection of nodes and clients.
extern const config_option<bool> security_ssl_internal_enabled;
/// This node's (or client's) certificate and private key, one PEM file.
extern const config_option<std::filesystem::path> security_ssl_internal_keystore;
/// The cluster CA's certificate, PEM.
extern const config_option<std::filesystem::path> security_ssl_internal_truststore;
/// The private key's passphrase.
extern const config_option<std::string> security_ssl_internal_key_password;
/// A connection that has not completed its TLS handshake by then is closed.
extern const config_option<duration> security_ssl_internal_handshake_timeout;
/// Fingerprints a peer's certificate must have (none: any the CA signed).
extern const config_option<std::string> security_ssl_internal_cert_fingerprint;
/// The TLS version spoken (TLSv1.2, TLSv1.3).
extern const config_option<std::string> security_ssl_protocol;
/// The cipher suites allowed (unset: OpenSSL's defaults).
extern const config_option<std::string> security_ssl_algorithms;
/// The most connections a node accepts at once (counted where the TLS handshake begins).
extern const config_option<std::int64_t> rpc_max_connections;
extern const config_option<duration> rpc_handshake_timeout;
/// The most connections a node accepts at once from one peer address.
extern const config_option<std::int64_t> rpc_max_connections_per_host;
/// After its handshake, a connection that sent nothing this long is closed (0: never).
extern const config_option<duration> rpc_idle_timeout;
/// The payload bytes the incomplete frames of all accepted connections may claim at once.
extern const config_option<memory_size> rpc_max_incomplete_frames_size;
/// Flink's PrometheusReporter: on when its factory class is set, at its port (or range).
extern const config_option<std::string> metrics_reporter_prom_factory_class;
extern const config_option<std::string> metrics_reporter_prom_port;
/// Flink's RestOptions and WebOptions: the JobManager's REST endpoint and dashboard.
extern const config_option<std::int64_t> rest_port;
extern const config_option<std::string> rest_bind_port;
extern const config_option<std::string> rest_address;
extern const config_option<std::string> rest_bind_address;
extern const config_option<std::int64_t> rest_server_max_content_length;
extern const config_option<std::filesystem::path> web_upload_dir;
extern const config_option<bool> web_submit_enable;
/// Flink's security.ssl.rest.*: HTTPS on the REST endpoint (PEM files, as the internal keys),
/// and with authentication mutual TLS.
extern const config_option<bool> security_ssl_rest_enabled;
extern const config_option<std::filesystem::path> security_ssl_rest_keystore;
extern const config_option<std::filesystem::path> security_ssl_rest_truststore;
extern const config_option<std::string> security_ssl_rest_key_password;
extern const config_option<bool> security_ssl_rest_authentication_enabled;

/// One option without its type: for listing, templates and checking a whole configuration.
struct option_info {
  std::string key;
  /// The default in Flink's syntax, or empty when the option has none.
  std::string default_text;
  std::string description;
  /// Whether `cfg` holds a valid value for this option (or none).
  expected<unit> (*validate)(const configuration& cfg);
};

/// Every option above, in the order listed here.
const std::vector<option_info>& all();

// Read per job by its JobMaster (the job's own settings over these), checked at submission.
/// How failed tasks restart: none (off, disable), fixed-delay, exponential-delay, failure-rate; unset: none, or fixed-delay without limit when checkpointing is on.
extern const config_option<std::string> restart_strategy_type;
/// The older name of restart-strategy.type.
extern const config_option<std::string> restart_strategy_legacy;
/// Restarts fixed-delay allows (1).
extern const config_option<std::string> restart_strategy_fixed_delay_attempts;
/// Pause before each fixed-delay restart (1 s).
extern const config_option<std::string> restart_strategy_fixed_delay_delay;
/// First exponential-delay pause (1 s).
extern const config_option<std::string> restart_strategy_exponential_delay_initial_backoff;
/// Longest exponential-delay pause (1 min).
extern const config_option<std::string> restart_strategy_exponential_delay_max_backoff;
/// Growth of the pause per failure (1.5).
extern const config_option<std::string> restart_strategy_exponential_delay_backoff_multiplier;
/// Time without failure after which the pause starts over (1 h).
extern const config_option<std::string> restart_strategy_exponential_delay_reset_backoff_threshold;
/// Random share of the pause, 0 to 1 (0.1).
extern const config_option<std::string> restart_strategy_exponential_delay_jitter_factor;
/// Restarts exponential-delay allows before the pause starts over (unbounded).
extern const config_option<std::string>
  restart_strategy_exponential_delay_attempts_before_reset_backoff;
/// Failures failure-rate tolerates within the interval (1).
extern const config_option<std::string> restart_strategy_failure_rate_max_failures_per_interval;
/// The window failure-rate counts failures in (1 min).
extern const config_option<std::string> restart_strategy_failure_rate_failure_rate_interval;
/// Pause before each failure-rate restart (1 s).
extern const config_option<std::string> restart_strategy_failure_rate_delay;
/// Which tasks restart with a failed one: region (its pipelined region and what it needs) or full.
extern const config_option<std::string> jobmanager_execution_failover_strategy;
/// Failures each job keeps in its exception history (16).
extern const config_option<std::string> web_exception_history_size;
extern const config_option<std::string> execution_checkpointing_interval;
extern const config_option<std::string> execution_checkpointing_timeout;
extern const config_option<std::string> execution_checkpointing_min_pause;
extern const config_option<std::string> execution_checkpointing_max_concurrent;
extern const config_option<std::string> execution_checkpointing_mode;
extern const config_option<std::string> execution_checkpointing_tolerable_failures;
extern const config_option<std::string> execution_checkpointing_externalized_retention;
extern const config_option<std::string> state_checkpoints_num_retained;
/// Checkpoints and savepoints: directories every node sees, so absolute (file_path.hpp).
extern const config_option<std::filesystem::path> state_checkpoints_dir;
extern const config_option<std::filesystem::path> state_savepoints_dir;
extern const config_option<std::string> state_backend_type;
extern const config_option<std::string> state_backend_incremental;
/// `state.backend.rocksdb.*`: Flint's cache in front of RocksDB and the RocksDB options Flink
/// users set (read by state::keyed_state_backend_options_from).
extern const config_option<memory_size> state_backend_rocksdb_cache_size;
extern const config_option<bool> state_backend_rocksdb_memory_managed;
extern const config_option<memory_size> state_backend_rocksdb_memory_fixed_per_slot;
extern const config_option<memory_size> state_backend_rocksdb_block_cache_size;
extern const config_option<memory_size> state_backend_rocksdb_writebuffer_size;
extern const config_option<std::string> state_backend_rocksdb_compaction_style;
extern const config_option<std::string> state_backend_rocksdb_predefined_options;

} // namespace flint::config::options

namespace flint::config {

/// Checks every known option set in `cfg` (so a node fails at start, not when it first reads
/// one), and that the heartbeat timeout is not shorter than the interval; the first error found.
expected<unit> validate(const configuration& cfg);

/// Keys of `cfg` that are not among `options::all()`, `key_aliases()` nor the metric reporters'
/// keys (metric_reporters.hpp) (to warn about typos; Flink's own files hold many keys Flint does
/// not read).
std::vector<std::string> unknown_keys(const configuration& cfg);

/// A second name of an option Flint reads under `read_as`, as Flink's `withDeprecatedKeys` and
/// `withFallbackKeys` give one.
struct key_alias {
  /// The name Flink also accepts.
  std::string name;
  /// The option's key, the one Flint's components read.
  std::string read_as;
  /// `name` is Flink's current key and `read_as` its deprecated one: `name` wins and a set
  /// `read_as` is warned about. Otherwise `name` is a fallback: `read_as` wins, no warning.
  bool name_is_current = false;
};

/// Flink's keys for options Flint reads under another: `pekko.ask.timeout` and `pekko.framesize`
/// (fallbacks of `rpc.ask.timeout`, `rpc.max-frame-size`), and Flink 2's
/// `execution.checkpointing.{dir,savepoint-dir,num-retained,incremental}` over the deprecated
/// `state.*` keys, and Flink 1.19's `execution.buffer-timeout.interval` over
/// `execution.buffer-timeout`.
const std::vector<key_alias>& key_aliases();

/// Stores each alias's value under the key Flint reads (the winner as `key_alias` says, with its
/// origin) and returns a warning, in Flink's words, for each deprecated key that is set:
/// "Config uses deprecated configuration key 'old' instead of proper key 'new'". Run it once,
/// on a process's whole configuration: afterwards the copied keys are set, so a second run would
/// warn about them.
std::vector<std::string> resolve_aliases(configuration& cfg);

} // namespace flint::config
