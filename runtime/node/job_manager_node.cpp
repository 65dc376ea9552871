#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/stop_actors.hpp"
#include "runtime/node/node_metrics.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/dispatcher/dispatcher.hpp"
#include "runtime/actors/leader/standalone_ha_services.hpp"
#include "runtime/actors/leader/zookeeper_ha_services.hpp"
#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/ha/ha_stores.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "runtime/node/zookeeper_connection.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/rpc/tls.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/rest/gateway_cluster_view.hpp"
#include "runtime/rest/rest_server.hpp"
#if defined(FLINT_NODE_HAS_BLOB)
#include "runtime/actors/blob/blob_server.hpp"
#endif
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
#include "runtime/actors/trace_server/trace_server.hpp"
#endif

namespace flint::node {

namespace {

/// Flink's JobManager figures (scope `jobmanager`) and each running job's (`jobmanager.job`),
/// asked of the leading endpoints of this node at each read; none while this node does not lead.
metrics::collector job_manager_collector(job_manager_node& node) {
  return [&node](std::vector<metrics::sample>& out) {
    if (!node.running())
      return;
    const rpc::client_identity who{"metrics", nullptr, std::chrono::seconds(2)};
    caf::scoped_actor self{node.system(), true};
    const metrics::variables host{{"host", node.settings().rpc_address}};
    auto rm = node.resource_manager_gateway();
    if (!rm.token().is_nil())
      if (auto o =
            rm.ask_blocking<resource_manager::request_resource_overview>(*self, who, rpc::ack{})) {
        out.push_back({"jobmanager", "numRegisteredTaskManagers", host,
                       static_cast<double>(o->number_task_managers)});
        out.push_back(
          {"jobmanager", "taskSlotsTotal", host, static_cast<double>(o->number_registered_slots)});
        out.push_back(
          {"jobmanager", "taskSlotsAvailable", host, static_cast<double>(o->number_free_slots)});
      }
    auto d = node.dispatcher_gateway();
    if (d.token().is_nil())
      return;
    auto jobs = d.ask_blocking<dispatcher::list_jobs>(*self, who, rpc::ack{});
    if (!jobs)
      return;
    double running = 0;
    auto now_ms = trace::system_now_us() / 1000;
    for (const auto& j : jobs->jobs) {
      if (graph::is_globally_terminal(j.status))
        continue;
      ++running;
      metrics::variables vars{{"host", node.settings().rpc_address},
                              {"job_id", j.job_id.to_string()},
                              {"job_name", j.name}};
      out.push_back({"jobmanager.job", "uptime", vars,
                     static_cast<double>(
                       j.status == graph::job_status::running ? now_ms - j.start_time_ms : 0)});
      if (auto st = d.ask_blocking<dispatcher::request_job_status>(
            *self, who, dispatcher::job_id_request{j.job_id})) {
        auto add = [&](const char* name, double v) {
          out.push_back({"jobmanager.job", name, vars, v});
        };
        add("numRestarts", static_cast<double>(st->restarts));
        // Flink's downtime: how long the current outage lasts (since the failure that began it).
        bool down = st->status == graph::job_status::restarting
          || st->status == graph::job_status::failing;
        add("downtime", down && !st->failures.empty()
                          ? static_cast<double>(now_ms - st->failures.front().timestamp)
                          : 0.0);
        // Flink's CheckpointStatsTracker gauges (-1 / 0 while there is nothing to report).
        const auto& c = st->checkpoints;
        add("lastCheckpointDuration", static_cast<double>(c.latest_duration_ms));
        add("lastCheckpointSize", static_cast<double>(c.latest_state_bytes));
        add("lastCheckpointFullSize", static_cast<double>(c.latest_state_bytes));
        add("numberOfCompletedCheckpoints", static_cast<double>(c.completed));
        add("numberOfFailedCheckpoints", static_cast<double>(c.failed));
        add("numberOfInProgressCheckpoints", static_cast<double>(c.in_progress));
        add("totalNumberOfCheckpoints",
            static_cast<double>(c.completed + c.failed + c.in_progress));
        add("lastCheckpointRestoreTimestamp",
            st->restored.id >= 0 ? static_cast<double>(st->restored.restore_time) : -1.0);
      }
    }
    out.push_back({"jobmanager", "numRunningJobs", host, running});
  };
}

/// What GET /jobmanager/config lists: the configuration as set, secrets hidden as Flink hides
/// them (GlobalConfiguration.isSensitive).
std::vector<std::pair<std::string, std::string>> visible_configuration(
  const config::configuration& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& key : cfg.keys())
    out.emplace_back(key, config::is_sensitive_key(key) ? std::string(config::hidden_value)
                                                        : cfg.get_raw(key).value_or(""));
  return out;
}

} // namespace

struct job_manager_node::impl {
  /// The entry point's own lines (Flink: ClusterEntrypoint).
  std::shared_ptr<spdlog::logger> log = make_endpoint_logger("jobmanager");
  job_manager_settings settings;
  job_manager_node_services services;
  rpc::node_options caf_options;
  // Outlive the actor system: endpoints use them until their on_exit ran.
  std::shared_ptr<ha::zookeeper_client> zookeeper;
  std::unique_ptr<leader::ha_services> ha;
  std::unique_ptr<ha::ha_stores> stores;
  rpc::endpoint_directory directory;
  node_metrics metrics;
  metrics::registration job_manager_figures;
  std::unique_ptr<rest::rest_server> rest;
  std::unique_ptr<trace::trace_recorder> recorder;
  std::unique_ptr<leader::leader_election_service> rm_election;
  caf::actor_system_config caf_config;
  std::unique_ptr<caf::actor_system> system;
  caf::actor locator;
  caf::actor resource_manager;
  caf::actor dispatcher;
  caf::actor blob_server;
  caf::actor trace_server;
  std::vector<std::string> endpoints;
  std::uint16_t port = 0;
  bool running = false;
  /// `blob.storage.directory`, or the private directory made for this run (Flink's
  /// blobStore-<uuid>), removed at shutdown.
  std::filesystem::path blob_directory;
  owned_directory owned_blob_directory;

  /// A configured directory is used only when it is this user's real directory; without one, a
  /// fresh private directory is made under the temporary directory.
  expected<unit> prepare_blob_directory() {
    if (!settings.blob_storage_directory.empty()) {
      blob_directory = settings.blob_storage_directory;
      return prepare_private_directory(blob_directory, "blob.storage.directory");
    }
    auto made = make_private_temp_directory("flint-blobStore-");
    if (!made)
      return make_error(made.error().code,
                        "cannot create the blob storage directory: " + made.error().message);
    blob_directory = *made;
    owned_blob_directory = owned_directory(*made);
    return unit{};
  }

  rpc::endpoint_context context(std::string id) const {
    return rpc::endpoint_context{std::move(id), recorder.get(), settings.rpc};
  }

  /// Flink's HighAvailabilityServicesUtils: standalone (every leader here under the fixed id) or
  /// ZooKeeper (these endpoints contend with other JobManagers'; followers resolve the leaders
  /// ZooKeeper names, this process's own through the directory).
  expected<unit> start_ha_services() {
    const auto& s = settings;
    if (!s.high_availability.zookeeper) {
      ha = std::make_unique<leader::standalone_ha_services>();
      stores = ha::make_standalone_ha_stores();
      return unit{};
    }
    const auto& h = s.high_availability;
    log->info("Using ZooKeeper HA at {} (root {}, cluster-id {}, storageDir {}).", h.quorum, h.root,
              h.cluster_id, h.storage_dir.string());
    auto client = connect_zookeeper(h, log);
    if (!client)
      return client.error();
    zookeeper = std::move(*client);
    if (auto ok = zookeeper->ensure_private_node(ha::cluster_path(h.root, h.cluster_id)); !ok)
      return ok.error();
    leader::zookeeper_ha_config config;
    config.root = h.root;
    config.cluster_id = h.cluster_id;
    config.suspended_grace = leadership_grace(*zookeeper, h, log);
    config.advertised_host = s.rpc_address;
    config.advertised_port = port;
    config.system = system.get();
    config.resolving.local_host = s.rpc_address;
    config.resolving.local_port = port;
    config.resolving.directory = &directory;
    ha = std::make_unique<leader::zookeeper_ha_services>(zookeeper, config, log);
    stores = ha::make_zookeeper_ha_stores(zookeeper, {h.root, h.cluster_id, h.storage_dir}, log);
    return unit{};
  }

  void close_ha_services() {
    stores.reset();
    ha.reset();
    if (zookeeper)
      zookeeper->close();
    zookeeper.reset();
  }

  void publish(const std::string& id, const caf::actor& a) {
    directory.put(id, a);
    rpc::register_endpoint(locator, id, a);
    endpoints.push_back(id);
  }
};

job_manager_node::job_manager_node(job_manager_settings settings, rpc::node_options caf_options,
                                   job_manager_node_services services)
  : impl_(std::make_unique<impl>()) {
  impl_->settings = std::move(settings);
  impl_->services = std::move(services);
  impl_->caf_options = caf_options;
  impl_->caf_options.network = true;
  // Before start, so a trace file can be enabled before the first message.
  impl_->recorder = std::make_unique<trace::trace_recorder>(trace::system_now_us);
}

job_manager_node::~job_manager_node() {
  shutdown();
}

expected<unit> job_manager_node::start() {
  auto& m = *impl_;
  if (m.running)
    return unit{};
  const auto& s = m.settings;
  m.log->info("Starting StandaloneSessionClusterEntrypoint (Flint).");
  if (auto ok = m.prepare_blob_directory(); !ok)
    return ok.error();
  m.log->info("Starting RPC service at {}:{} (bind host {}).", s.rpc_address, s.rpc_port,
              s.bind_host.empty() ? "<all interfaces>" : s.bind_host);
  if (s.tls.enabled) {
    // The module would take bad files now and abort at the first connection (CAF-NOTES).
    if (auto ok = rpc::check_tls_files(s.tls); !ok)
      return ok.error();
    m.log->info("Mutual TLS on every connection (keystore {}, truststore {}).", s.tls.keystore,
                s.tls.truststore);
  }
  if (s.rest.enabled && s.rest.tls.enabled)
    if (auto ok = rest::check_tls_files(s.rest.tls); !ok)
      return ok.error();
  m.caf_options.tls = s.tls;
  m.caf_options.inbound = s.inbound;
  rpc::configure_node(m.caf_config, m.caf_options);
  // Every accepted connection passes the inbound guard: a node without it must not start.
  if (auto ok = rpc::check_inbound_guard_live(); !ok)
    return ok.error();
  m.system = std::make_unique<caf::actor_system>(m.caf_config);
  m.locator = rpc::spawn_endpoint_locator(*m.system, &m.directory);
  auto port = rpc::publish_locator(*m.system, m.locator, s.rpc_port, s.bind_host);
  if (!port) {
    caf::anon_send_exit(m.locator, caf::exit_reason::user_shutdown);
    m.locator = {};
    m.system.reset();
    return port.error();
  }
  m.port = *port;
  m.log->info("Actor system started at flint://{}:{}", s.rpc_address, m.port);
  if (auto ha = m.start_ha_services(); !ha) {
    m.system->middleman().unpublish(m.locator, m.port);
    stop_and_wait(*m.system, {m.locator});
    m.locator = {};
    m.system.reset();
    return ha.error();
  }

  resource_manager::resource_manager_config rm_config;
  rm_config.heartbeat = s.heartbeat;
  rm_config.slot_request_timeout = s.slot_request_timeout;
  rm_config.task_manager_timeout = s.task_manager_timeout;
  m.rm_election = m.ha->resource_manager_election();
  m.resource_manager = m.system->spawn<resource_manager::resource_manager>(
    m.context(resource_manager::endpoint_name), rm_config,
    resource_manager::resource_manager_services{m.rm_election.get(), &m.directory});
  m.publish(resource_manager::endpoint_name, m.resource_manager);
  m.log->info("Starting RPC endpoint for ResourceManager at flint://{}:{}/{}.", s.rpc_address,
              m.port, resource_manager::endpoint_name);

  dispatcher::dispatcher_config d_config;
  d_config.job_master.heartbeat = s.heartbeat;
  d_config.job_master.registration = s.registration;
  d_config.job_master.slot_request_timeout = s.slot_request_timeout;
  d_config.job_master.slot_idle_timeout = s.slot_idle_timeout;
  d_config.job_master.configuration = s.configuration;
  dispatcher::dispatcher_services d_services;
  d_services.ha = m.ha.get();
  d_services.stores = m.stores.get();
  d_services.directory = &m.directory;
  d_services.now_ms = [] { return trace::system_now_us() / 1000; };
  m.dispatcher = m.system->spawn<dispatcher::dispatcher>(m.context(dispatcher::endpoint_name),
                                                         d_config, std::move(d_services));
  m.publish(dispatcher::endpoint_name, m.dispatcher);
  m.log->info("Starting RPC endpoint for Dispatcher at flint://{}:{}/{}.", s.rpc_address, m.port,
              dispatcher::endpoint_name);

#if defined(FLINT_NODE_HAS_BLOB)
  m.blob_server = blob::spawn_blob_server(
    *m.system, m.context("blob_server"), m.blob_directory,
    s.high_availability.zookeeper
      ? s.high_availability.storage_dir / s.high_availability.cluster_id / "blob"
      : std::filesystem::path{});
  m.publish("blob_server", m.blob_server);
  m.log->info("Started BLOB server at flint://{}:{}/blob_server - storage directory {}.",
              s.rpc_address, m.port, m.blob_directory.string());
#endif
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
  m.trace_server = trace::spawn_trace_server(*m.system, m.context("trace"), *m.recorder);
  m.publish("trace", m.trace_server);
#endif
  m.job_manager_figures = m.metrics.registry()->add(job_manager_collector(*this));
  m.metrics.add_process_figures("jobmanager", {{"host", s.rpc_address}});
  m.metrics.start_reporter(s, s.bind_host, *m.log);
  if (s.rest.enabled)
    start_rest();
  m.running = true;
  return unit{};
}

void job_manager_node::start_rest() {
  auto& m = *impl_;
  const auto& s = m.settings;
  rest::rest_options o;
  o.bind_address = s.rest.bind_address;
  o.bind_port = s.rest.bind_port;
  o.max_content_length = s.rest.max_content_length;
  o.upload_dir =
    s.rest.upload_dir.empty() ? m.blob_directory / "flint-web-upload" : s.rest.upload_dir;
  o.submit_enabled = s.rest.submit_enabled;
  o.tls = s.rest.tls;
  o.internal_tls = s.tls.enabled;
  if (s.tls.enabled && !s.rest.tls.authenticates())
    m.log->info(
      "REST serves reads only: security.ssl.internal.enabled is on and REST does not "
      "authenticate its clients (security.ssl.rest.authentication-enabled).");
  // As Flink's ClusterEntrypoint writes them back: where the RPC service listens (a port 0 as
  // configured is the one the system picked), for clients given only the REST address (`flint -m`).
  auto effective = s.configuration;
  effective.set("jobmanager.rpc.address", s.rpc_address);
  effective.set("jobmanager.rpc.port", std::to_string(m.port));
  o.configuration = visible_configuration(effective);
  o.heartbeat_interval_ms = s.heartbeat.interval.count();
  o.log_file = s.rest.log_file;
  if (auto history = s.configuration.get_int("web.checkpoints.history");
      history && *history >= 0)
    o.checkpoint_history = static_cast<std::size_t>(*history);
  rest::gateway_providers gateways{
    [this] { return dispatcher_gateway(); }, [this] { return resource_manager_gateway(); }, {}};
  if (m.trace_server)
    gateways.trace = [&m] { return rpc::gateway(m.trace_server, "trace", {}); };
  if (m.blob_server)
    gateways.blob_server = [&m] { return m.blob_server; };
  gateways.job_programs = m.services.job_programs;
  // With ZooKeeper HA, where the leader's REST endpoint is while this node does not lead.
  if (m.zookeeper)
    gateways.leader_rest_url = [this] { return leader_rest_url(); };
  // The TaskExecutors registered here (the ResourceManager puts them in the directory).
  gateways.task_executor = [&m](const std::string& id) {
    return m.directory.lookup(id).value_or(caf::actor{});
  };
  auto view = rest::make_gateway_cluster_view(*m.system, std::move(gateways), s.rpc.ask_timeout,
                                              s.configuration);
  auto started =
    rest::rest_server::start(std::move(o), std::move(view), make_endpoint_logger("rest"));
  if (!started) {
    // As the metrics reporter: the cluster runs on without its REST endpoint.
    m.log->error("Could not start the REST endpoint: {}", started.error().message);
    return;
  }
  m.rest = std::move(*started);
  auto address = s.rest.address.empty() ? s.rpc_address : s.rest.address;
  m.log->info("Rest endpoint listening at {}:{}", address, m.rest->port());
  publish_rest_endpoint((s.rest.tls.enabled ? "https://" : "http://") + address + ":"
                        + std::to_string(m.rest->port()));
  m.log->info("Web frontend listening at {}://{}:{}.", s.rest.tls.enabled ? "https" : "http",
              address, m.rest->port());
}

void job_manager_node::shutdown() {
  auto& m = *impl_;
  if (!m.running)
    return;
  m.running = false;
  m.log->info("Shutting StandaloneSessionClusterEntrypoint down.");
  // REST first: its handlers ask the endpoints stopped below.
  if (m.rest)
    m.rest->stop();
  m.rest.reset();
  m.metrics.stop_reporter();
  m.job_manager_figures = {};
  // The Dispatcher first (its JobMasters stop with it and tell their TaskManagers), then the
  // ResourceManager, then the servers and the locator.
  stop_and_wait(*m.system, {m.dispatcher});
  stop_and_wait(*m.system, {m.resource_manager, m.blob_server, m.trace_server});
  m.system->middleman().unpublish(m.locator, m.port);
  stop_and_wait(*m.system, {m.locator});
  m.dispatcher = m.resource_manager = m.blob_server = m.trace_server = m.locator = {};
  m.system.reset();
  m.rm_election.reset();
  m.close_ha_services();
  m.endpoints.clear();
  m.owned_blob_directory = {};
  m.log->info("Terminated the JobManager.");
}

bool job_manager_node::running() const noexcept {
  return impl_->running;
}
std::uint16_t job_manager_node::rpc_port() const noexcept {
  return impl_->port;
}
const job_manager_settings& job_manager_node::settings() const noexcept {
  return impl_->settings;
}
const std::filesystem::path& job_manager_node::blob_storage_directory() const noexcept {
  return impl_->blob_directory;
}
std::vector<std::string> job_manager_node::endpoints() const {
  return impl_->endpoints;
}
caf::actor_system& job_manager_node::system() {
  return *impl_->system;
}
rpc::endpoint_directory& job_manager_node::directory() {
  return impl_->directory;
}
trace::trace_recorder& job_manager_node::recorder() {
  return *impl_->recorder;
}
const caf::actor& job_manager_node::dispatcher() const {
  return impl_->dispatcher;
}
const caf::actor& job_manager_node::resource_manager() const {
  return impl_->resource_manager;
}
rpc::fencing_token job_manager_node::leader_id(const std::string& endpoint_id) const {
  auto& m = *impl_;
  if (!m.zookeeper)
    return leader::standalone_leader_id();
  auto* zk = dynamic_cast<leader::zookeeper_ha_services*>(m.ha.get());
  if (zk == nullptr)
    return {};
  auto node = m.zookeeper->get(zk->component_path(endpoint_id) + "/connection_info");
  if (!node)
    return {};
  auto published = leader::decode_leader_address(node->data);
  if (!published || published->address.host != m.settings.rpc_address
      || published->address.port != m.port)
    return {};
  return published->session_id;
}
std::uint16_t job_manager_node::metrics_port() const noexcept {
  return impl_->metrics.reporter_port();
}
std::uint16_t job_manager_node::rest_port() const noexcept {
  return impl_->rest ? impl_->rest->port() : 0;
}

void job_manager_node::publish_rest_endpoint(const std::string& url) {
  auto& m = *impl_;
  if (!m.zookeeper)
    return;
  const auto& h = m.settings.high_availability;
  auto path = ha::rest_endpoint_path(ha::cluster_path(h.root, h.cluster_id), m.settings.rpc_address,
                                     m.port);
  // A node of this address left by a session of this node's that has not ended yet.
  (void)m.zookeeper->remove(path);
  auto created = m.zookeeper->create(path, url, {ha::zookeeper_create_mode::ephemeral, true});
  if (!created)
    m.log->warn("Could not publish the REST endpoint {} at {}: {}. A standby's REST endpoint "
                "answers 503 instead of forwarding to this node while it leads.",
                url, path, created.error().to_string());
}

std::optional<std::string> job_manager_node::leader_rest_url() const {
  auto& m = *impl_;
  auto* zk = dynamic_cast<leader::zookeeper_ha_services*>(m.ha.get());
  if (!m.zookeeper || zk == nullptr)
    return std::nullopt;
  auto node = m.zookeeper->get(zk->component_path(dispatcher::endpoint_name) + "/connection_info");
  if (!node)
    return std::nullopt;
  auto leader = leader::decode_leader_address(node->data);
  if (!leader || leader->address.host.empty()
      || (leader->address.host == m.settings.rpc_address && leader->address.port == m.port))
    return std::nullopt;
  const auto& h = m.settings.high_availability;
  auto rest = m.zookeeper->get(ha::rest_endpoint_path(ha::cluster_path(h.root, h.cluster_id),
                                                      leader->address.host,
                                                      leader->address.port));
  if (!rest || rest->data.empty())
    return std::nullopt;
  return rest->data;
}

rpc::gateway job_manager_node::dispatcher_gateway() const {
  return rpc::gateway(impl_->dispatcher, dispatcher::endpoint_name,
                      leader_id(dispatcher::endpoint_name));
}
rpc::gateway job_manager_node::resource_manager_gateway() const {
  return rpc::gateway(impl_->resource_manager, resource_manager::endpoint_name,
                      leader_id(resource_manager::endpoint_name));
}

} // namespace flint::node
