#include "runtime/node/job_manager_node.hpp"
#include "runtime/node/stop_actors.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/dispatcher/dispatcher.hpp"
#include "runtime/actors/leader/standalone_ha_services.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"
#if defined(FLINT_NODE_HAS_BLOB)
#include "runtime/actors/blob/blob_server.hpp"
#endif
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
#include "runtime/actors/trace_server/trace_server.hpp"
#endif

namespace flint::node {

struct job_manager_node::impl {
  /// The entry point's own lines (Flink: ClusterEntrypoint).
  std::shared_ptr<spdlog::logger> log = make_endpoint_logger("jobmanager");
  job_manager_settings settings;
  rpc::node_options caf_options;
  // Outlive the actor system: endpoints use them until their on_exit ran.
  leader::standalone_ha_services ha;
  rpc::endpoint_directory directory;
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

  rpc::endpoint_context context(std::string id) const {
    return rpc::endpoint_context{std::move(id), recorder.get(), settings.rpc};
  }

  void publish(const std::string& id, const caf::actor& a) {
    directory.put(id, a);
    rpc::register_endpoint(locator, id, a);
    endpoints.push_back(id);
  }
};

job_manager_node::job_manager_node(job_manager_settings settings, rpc::node_options caf_options)
  : impl_(std::make_unique<impl>()) {
  impl_->settings = std::move(settings);
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
  m.log->info("Starting RPC service at {}:{} (bind host {}).", s.rpc_address, s.rpc_port,
              s.bind_host.empty() ? "<all interfaces>" : s.bind_host);
  rpc::configure_node(m.caf_config, m.caf_options);
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

  resource_manager::resource_manager_config rm_config;
  rm_config.heartbeat = s.heartbeat;
  rm_config.slot_request_timeout = s.slot_request_timeout;
  rm_config.task_manager_timeout = s.task_manager_timeout;
  m.rm_election = m.ha.resource_manager_election();
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
  d_services.ha = &m.ha;
  d_services.directory = &m.directory;
  d_services.now_ms = [] { return trace::system_now_us() / 1000; };
  m.dispatcher = m.system->spawn<dispatcher::dispatcher>(m.context(dispatcher::endpoint_name),
                                                         d_config, std::move(d_services));
  m.publish(dispatcher::endpoint_name, m.dispatcher);
  m.log->info("Starting RPC endpoint for Dispatcher at flint://{}:{}/{}.", s.rpc_address, m.port,
              dispatcher::endpoint_name);

#if defined(FLINT_NODE_HAS_BLOB)
  std::error_code ec;
  std::filesystem::create_directories(s.blob_storage_directory, ec);
  m.blob_server =
    blob::spawn_blob_server(*m.system, m.context("blob_server"), s.blob_storage_directory);
  m.publish("blob_server", m.blob_server);
  m.log->info("Started BLOB server at flint://{}:{}/blob_server - storage directory {}.",
              s.rpc_address, m.port, s.blob_storage_directory.string());
#endif
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
  m.trace_server = trace::spawn_trace_server(*m.system, m.context("trace"), *m.recorder);
  m.publish("trace", m.trace_server);
#endif
  m.running = true;
  return unit{};
}

void job_manager_node::shutdown() {
  auto& m = *impl_;
  if (!m.running)
    return;
  m.running = false;
  m.log->info("Shutting StandaloneSessionClusterEntrypoint down.");
  // The Dispatcher first (its JobMasters stop with it and tell their TaskManagers), then the
  // ResourceManager, then the servers and the locator.
  stop_and_wait(*m.system, {m.dispatcher});
  stop_and_wait(*m.system, {m.resource_manager, m.blob_server, m.trace_server});
  m.system->middleman().unpublish(m.locator, m.port);
  stop_and_wait(*m.system, {m.locator});
  m.dispatcher = m.resource_manager = m.blob_server = m.trace_server = m.locator = {};
  m.system.reset();
  m.rm_election.reset();
  m.endpoints.clear();
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
rpc::gateway job_manager_node::dispatcher_gateway() const {
  return rpc::gateway(impl_->dispatcher, dispatcher::endpoint_name, leader::standalone_leader_id());
}
rpc::gateway job_manager_node::resource_manager_gateway() const {
  return rpc::gateway(impl_->resource_manager, resource_manager::endpoint_name,
                      leader::standalone_leader_id());
}

} // namespace flint::node
