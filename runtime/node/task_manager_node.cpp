#include "runtime/node/task_manager_node.hpp"
#include "runtime/node/node_metrics.hpp"
#include "runtime/node/stop_actors.hpp"

#include <mutex>
#include <optional>
#include <random>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/leader/standalone_ha_services.hpp"
#include "runtime/actors/leader/zookeeper_ha_services.hpp"
#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/node/zookeeper_connection.hpp"
#include "runtime/actors/task_executor/task_executor.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/rpc/tls.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/common/private_directory.hpp"
#include "runtime/streaming/streaming_environment.hpp"
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
#include "runtime/actors/trace_server/trace_server.hpp"
#endif

namespace flint::node {

namespace {

const std::shared_ptr<spdlog::logger>& logger() {
  static const auto log = make_endpoint_logger("taskmanager");
  return log;
}

std::string random_suffix() {
  std::random_device rd;
  std::mt19937_64 rng(rd());
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(6, '0');
  for (auto& c : out)
    c = digits[rng() % 16];
  return out;
}

/// Host and port of the first server of "host:port,host:port[/chroot]".
std::pair<std::string, std::uint16_t> first_quorum_server(const std::string& quorum) {
  auto first = quorum.substr(0, quorum.find_first_of(",/"));
  auto colon = first.rfind(':');
  if (colon == std::string::npos)
    return {first, 2181};
  auto port = std::atoi(first.substr(colon + 1).c_str());
  return {first.substr(0, colon),
          static_cast<std::uint16_t>(port > 0 && port < 65536 ? port : 2181)};
}

} // namespace

/// Follows where the Dispatcher leader's process is (its blob server is there too).
struct leader_host_tracker final : leader::leader_retrieval_listener {
  std::mutex mtx;
  std::optional<std::pair<std::string, std::uint16_t>> where;
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token&) override {
    std::lock_guard<std::mutex> guard(mtx);
    if (address.host.empty())
      where.reset();
    else
      where = std::pair{address.host, address.port};
  }
};

struct task_manager_node::impl {
  task_manager_settings settings;
  task_manager_node_services services;
  rpc::node_options caf_options;
  // Outlive the actor system's actors (declared first, destroyed last).
  rpc::endpoint_directory directory;
  node_metrics metrics;
  std::unique_ptr<trace::trace_recorder> recorder;
  std::unique_ptr<streaming::streaming_environment> env;
  caf::actor_system_config caf_config;
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<ha::zookeeper_client> zookeeper;
  std::unique_ptr<leader::ha_services> ha;
  std::shared_ptr<leader_host_tracker> job_manager_host = std::make_shared<leader_host_tracker>();
  std::unique_ptr<leader::leader_retrieval_service> job_manager_retrieval;
  caf::actor locator;
  caf::actor task_executor;
  caf::actor trace_server;
  std::string host;
  std::string resource_id;
  std::uint16_t rpc_port = 0;
  std::uint16_t data_port = 0;
  bool running = false;
  /// Detached actors of the system before any task (CAF's own): tasks are the rest.
  std::size_t detached_baseline = 0;

  rpc::endpoint_context context(std::string id) const {
    return rpc::endpoint_context{std::move(id), recorder.get(), settings.rpc};
  }

  void stop_everything() {
    // The TaskExecutor first: its on_exit stops the leader retrievals (joining their threads)
    // and cancels the tasks; then the tasks' buffers come back.
    metrics.stop_reporter();
    std::vector<caf::actor> actors{task_executor, trace_server, locator};
    stop_and_wait(*system, actors);
    if (env && !env->await_tasks_released(std::chrono::seconds(30)))
      logger()->warn("Some tasks did not release their resources within 30 s.");
    if (env)
      env->shuffle().disable_remote_channels();
    task_executor = trace_server = locator = {};
    // Released is not yet destroyed: the system must outlive every task actor (stop_actors.hpp).
    if (system && !await_detached_actors(*system, detached_baseline, std::chrono::seconds(30)))
      logger()->warn(
        "Task threads were still referenced 30 s after the tasks ended ({} detached actors, {} "
        "before any task); stopping the actor system waits for them.",
        system->detached_actors(), detached_baseline);
    if (rpc_port != 0)
      system->middleman().close(rpc_port);
    system.reset();
    if (job_manager_retrieval)
      job_manager_retrieval->stop();
    job_manager_retrieval.reset();
    ha.reset();
    if (zookeeper)
      zookeeper->close();
    zookeeper.reset();
  }
};

task_manager_node::task_manager_node(task_manager_settings settings,
                                     task_manager_node_services services,
                                     rpc::node_options caf_options)
  : impl_(std::make_unique<impl>()) {
  impl_->settings = std::move(settings);
  impl_->services = std::move(services);
  impl_->caf_options = caf_options;
  impl_->caf_options.network = true;
  // Before start, so a trace file can be enabled before the first message.
  impl_->recorder = std::make_unique<trace::trace_recorder>(trace::system_now_us);
}

task_manager_node::~task_manager_node() {
  shutdown();
}

bool task_manager_node::remote_channels_available() noexcept {
  return true;
}

expected<unit> task_manager_node::start() {
  auto& m = *impl_;
  if (m.running)
    return unit{};
  const auto& s = m.settings;
  const auto& h = s.high_availability;
  if (h.zookeeper)
    logger()->info("Starting TaskManager (Flint) with {} task slot(s); leaders from ZooKeeper {}.",
                   s.number_of_slots, h.quorum);
  else
    logger()->info("Starting TaskManager (Flint) with {} task slot(s); JobManager at {}:{}.",
                   s.number_of_slots, s.jobmanager_address, s.jobmanager_port);
  // With ZooKeeper HA no JobManager address is known before the leader is: the interface that
  // reaches the first ZooKeeper server is taken instead.
  auto [probe_host, probe_port] = h.zookeeper ? first_quorum_server(h.quorum)
                                              : std::pair{s.jobmanager_address, s.jobmanager_port};
  m.host = s.host.empty() ? find_connecting_address(probe_host, probe_port) : s.host;
  logger()->info("Using {} address for TaskManager: {}.",
                 s.host.empty() ? "the connecting" : "the configured", m.host);

  // The job library cache lives under it: this user's real directory or none.
  if (!s.blob_storage_directory.empty())
    if (auto ok = prepare_private_directory(s.blob_storage_directory, "blob.storage.directory");
        !ok)
      return ok.error();
  if (s.tls.enabled) {
    if (auto ok = rpc::check_tls_files(s.tls); !ok)
      return ok.error();
    logger()->info("Mutual TLS on every connection (keystore {}, truststore {}).", s.tls.keystore,
                   s.tls.truststore);
  }
  m.caf_options.tls = s.tls;
  m.caf_options.inbound = s.inbound;
  rpc::configure_node(m.caf_config, m.caf_options);
  // Every accepted connection passes the inbound guard: a node without it must not start.
  if (auto ok = rpc::check_inbound_guard_live(); !ok)
    return ok.error();
  m.system = std::make_unique<caf::actor_system>(m.caf_config);
  m.detached_baseline = m.system->detached_actors();
  m.locator = rpc::spawn_endpoint_locator(*m.system, &m.directory);
  auto port = rpc::publish_locator(*m.system, m.locator, s.rpc_port, s.bind_host);
  if (!port) {
    m.stop_everything();
    return port.error();
  }
  m.rpc_port = *port;
  logger()->info("Actor system started at flint://{}:{}", m.host, m.rpc_port);

  m.env = std::make_unique<streaming::streaming_environment>(s.network);
  if (m.services.write_stdout)
    m.env->set_stdout(m.services.write_stdout);
  auto data = m.env->shuffle().enable_remote_channels(*m.system, m.host, s.data_port, s.bind_host);
  if (!data) {
    m.stop_everything();
    return data.error();
  }
  m.data_port = *data;
  logger()->info("Started the data exchange server at {}:{}.", m.host, m.data_port);

  if (h.zookeeper) {
    auto client = connect_zookeeper(h, logger());
    if (!client) {
      m.stop_everything();
      return client.error();
    }
    m.zookeeper = std::move(*client);
    leader::zookeeper_ha_config ha_config;
    ha_config.root = h.root;
    ha_config.cluster_id = h.cluster_id;
    ha_config.suspended_grace = leadership_grace(*m.zookeeper, h, logger());
    ha_config.system = m.system.get();
    auto zk_ha = std::make_unique<leader::zookeeper_ha_services>(m.zookeeper, ha_config, logger());
    m.job_manager_retrieval = std::make_unique<leader::zookeeper_leader_retrieval_service>(
      m.zookeeper, zk_ha->component_path("dispatcher"), logger());
    m.job_manager_retrieval->start(*m.job_manager_host);
    m.ha = std::move(zk_ha);
  } else {
    m.job_manager_host->where = std::pair{s.jobmanager_address, s.jobmanager_port};
    leader::standalone_ha_config ha_config;
    ha_config.jobmanager_host = s.jobmanager_address;
    ha_config.jobmanager_port = s.jobmanager_port;
    m.ha = std::make_unique<leader::standalone_ha_services>(*m.system, ha_config);
  }

  m.resource_id = s.resource_id.empty()
    ? m.host + ":" + std::to_string(m.rpc_port) + "-" + random_suffix()
    : s.resource_id;
  task_executor::task_executor_config te_config;
  te_config.resource_id = std::string(task_executor::endpoint_prefix) + m.resource_id;
  te_config.host = m.host;
  te_config.data_port = m.data_port;
  te_config.number_of_slots = s.number_of_slots;
  te_config.heartbeat = s.heartbeat;
  te_config.registration = s.registration;
  te_config.detached_tasks = true;
  te_config.slot_timeout = s.slot_timeout;
  te_config.log_file = s.log_file;
  task_executor::task_executor_services te_services;
  te_services.ha = m.ha.get();
  te_services.directory = &m.directory;
  te_services.metrics = m.metrics.registry();
  m.metrics.add_process_figures("taskmanager", {{"host", te_config.host}, {"tm_id", te_config.resource_id}});
  auto shuffle = m.env->shuffle_ptr();
  te_services.holds_partitions = [shuffle](const graph::job_id& job) {
    return shuffle->num_partitions(job) > 0;
  };
  te_services.release_job_partitions = [shuffle](const graph::job_id& job) {
    shuffle->release_job(job);
  };
  te_services.release_partitions =
    [shuffle](const graph::job_id& job,
              const std::vector<graph::intermediate_result_partition_id>& ids) {
      shuffle->release_partitions(job, ids);
    };
  te_services.invokables = m.services.make_invokables
    ? m.services.make_invokables(*m.system, *m.env, m.resource_id,
                                 [tracker = m.job_manager_host] {
                                   std::lock_guard<std::mutex> guard(tracker->mtx);
                                   return tracker->where;
                                 })
    : streaming::make_stream_task_factory(*m.env);
  logger()->info("Starting TaskExecutor with ResourceID {}.", m.resource_id);
  m.task_executor = m.system->spawn<task_executor::task_executor>(
    m.context(te_config.resource_id), te_config, std::move(te_services));
  rpc::register_endpoint(m.locator, te_config.resource_id, m.task_executor);
#if defined(FLINT_NODE_HAS_TRACE_SERVER)
  m.trace_server = trace::spawn_trace_server(*m.system, m.context("trace"), *m.recorder);
  rpc::register_endpoint(m.locator, "trace", m.trace_server);
#endif
  m.metrics.start_reporter(m.settings, m.settings.bind_host, *logger());
  m.running = true;
  return unit{};
}

void task_manager_node::shutdown() {
  auto& m = *impl_;
  if (!m.running)
    return;
  m.running = false;
  logger()->info("Stopping TaskManager {}.", m.resource_id);
  m.stop_everything();
  logger()->info("Terminated the TaskManager {}.", m.resource_id);
}

bool task_manager_node::running() const noexcept {
  return impl_->running;
}
std::uint16_t task_manager_node::rpc_port() const noexcept {
  return impl_->rpc_port;
}
std::uint16_t task_manager_node::metrics_port() const noexcept {
  return impl_->metrics.reporter_port();
}
std::uint16_t task_manager_node::data_port() const noexcept {
  return impl_->data_port;
}
const std::string& task_manager_node::host() const noexcept {
  return impl_->host;
}
const std::string& task_manager_node::resource_id() const noexcept {
  return impl_->resource_id;
}
const task_manager_settings& task_manager_node::settings() const noexcept {
  return impl_->settings;
}
caf::actor_system& task_manager_node::system() {
  return *impl_->system;
}
rpc::endpoint_directory& task_manager_node::directory() {
  return impl_->directory;
}
trace::trace_recorder& task_manager_node::recorder() {
  return *impl_->recorder;
}
streaming::streaming_environment& task_manager_node::streaming() {
  return *impl_->env;
}
const caf::actor& task_manager_node::task_executor() const {
  return impl_->task_executor;
}

} // namespace flint::node
