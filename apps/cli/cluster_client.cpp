#include "apps/cli/cluster_client.hpp"

#include <optional>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "apps/cli/watchdog.hpp"
#include "runtime/actors/leader/embedded_leader_service.hpp" // standalone_leader_id()
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/rpc/tls.hpp"
#include "runtime/ha/zookeeper_paths.hpp"
#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/common/logging.hpp"
#include "runtime/ha/zookeeper/zookeeper_client.hpp"
#include "runtime/node/zookeeper_connection.hpp"

#include <thread>

namespace flint::cli {

struct cluster_client::impl {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  rpc::gateway dispatcher;
  std::shared_ptr<ha::zookeeper_client> zookeeper;
  /// With ZooKeeper HA: the leading JobManager's address, once found.
  std::optional<config::host_port> leader;

  /// Why the client cannot connect at all (a bad TLS setting), if it cannot.
  std::optional<error> unusable;

  explicit impl(const config::configuration& config) {
    // One worker is plenty for a client that waits on one answer at a time.
    rpc::node_options options{"stealing", 2, true, {}, {}};
    auto tls = node::read_tls_settings(config);
    if (!tls)
      unusable = tls.error();
    else if (tls->enabled) {
      if (auto ok = rpc::check_tls_files(*tls); !ok)
        unusable = ok.error();
      else
        options.tls = *tls;
    }
    rpc::configure_node(cfg, options);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  rpc::client_identity who(std::chrono::nanoseconds timeout) const {
    return rpc::client_identity{client_endpoint_id, nullptr, timeout};
  }
};

std::string where(const cli_settings& s) {
  if (s.rest_address)
    return s.address.to_string() + " (the RPC address named by the REST endpoint at "
      + s.rest_address->to_string() + ")";
  return s.address.to_string();
}

cluster_client::cluster_client(const cli_settings& settings)
  : settings_(settings),
    impl_(std::make_unique<impl>(settings.config)) {}

cluster_client::~cluster_client() = default;

caf::actor_system& cluster_client::system() {
  return *impl_->sys;
}

expected<caf::actor> cluster_client::connect(const std::string& endpoint_id,
                                             const std::string& role) {
  if (impl_->unusable)
    return *impl_->unusable;
  // With HA the leader's process serves the other endpoints (blob server, ResourceManager) too.
  if (uses_zookeeper() && !impl_->leader)
    if (auto found = connect_leading_dispatcher(settings_.ask_timeout); !found)
      return found.error();
  auto target = impl_->leader ? *impl_->leader : settings_.address;
  auto addr = impl_->leader ? target.to_string() : where(settings_);
  auto prefix = "Could not connect to the " + role + " at " + addr;
  // connect_endpoint bounds the lookup, not the TCP connect: the watchdog bounds both.
  watchdog guard(
    settings_.ask_timeout + std::chrono::seconds(1),
    "flint: " + prefix + ": no answer within " + describe(settings_.ask_timeout) + " (--timeout)");
  auto found = rpc::connect_endpoint(*impl_->sys, target.host, target.port, endpoint_id,
                                     settings_.ask_timeout);
  if (!found) {
    if (found.error().code == errc::not_found)
      return make_error(errc::not_found,
                        "The node at " + addr + " has no " + role + " (endpoint '" + endpoint_id
                          + "'): is -m the right node?");
    return make_error(found.error().code, prefix + ": " + found.error().message);
  }
  return found;
}

bool cluster_client::uses_zookeeper() const {
  if (settings_.address_given)
    return false;
  // Unreadable HA settings (say, the creator ACL without its digest file) are reported by
  // connect_leading_dispatcher, not taken for "no ZooKeeper" and a silent fallback to
  // jobmanager.rpc.address.
  auto ha = node::read_high_availability_settings(settings_.config);
  return !ha || ha->zookeeper;
}

expected<unit> cluster_client::connect_leading_dispatcher(std::chrono::nanoseconds wait) {
  if (impl_->unusable)
    return *impl_->unusable;
  auto ha = node::read_high_availability_settings(settings_.config);
  if (!ha)
    return ha.error();
  if (!impl_->zookeeper) {
    // The client's session is only read through: a short session ends it soon after we exit.
    auto s = *ha;
    s.session_timeout = std::min(s.session_timeout, std::chrono::milliseconds(10000));
    s.connection_timeout =
      std::min(s.connection_timeout,
               std::chrono::duration_cast<std::chrono::milliseconds>(settings_.ask_timeout));
    s.max_retry_attempts = 1;
    auto client = node::connect_zookeeper(s, make_endpoint_logger("zookeeper"));
    if (!client)
      return client.error();
    impl_->zookeeper = std::move(*client);
  }
  auto leader_info = leader_path(dispatcher::endpoint_name);
  if (!leader_info)
    return leader_info.error();
  auto path = *leader_info;
  // Flink's CLI waits for a leader too (LeaderRetrievalUtils.retrieveLeaderInformation).
  auto deadline = std::chrono::steady_clock::now() + wait;
  std::string why = "no leader published at " + path;
  for (;;) {
    auto node = impl_->zookeeper->get(path);
    if (node) {
      auto leader = leader::decode_leader_address(node->data);
      if (!leader)
        why = "malformed leader information at " + path;
      else {
        auto found = rpc::connect_endpoint(*impl_->sys, leader->address.host, leader->address.port,
                                           dispatcher::endpoint_name, settings_.ask_timeout);
        if (found) {
          impl_->dispatcher =
            rpc::gateway(std::move(*found), dispatcher::endpoint_name, leader->session_id);
          impl_->leader = config::host_port{leader->address.host, leader->address.port};
          return unit{};
        }
        why = "the leader at " + leader->address.host + ":" + std::to_string(leader->address.port)
          + " did not answer: " + found.error().message;
      }
    } else if (node.error().code != errc::not_found) {
      why = node.error().message;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(
        errc::unreachable,
        "Could not find the leading Dispatcher through ZooKeeper " + ha->quorum + ": " + why);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

expected<std::string> cluster_client::leader_path(const std::string& component) const {
  auto ha = node::read_high_availability_settings(settings_.config);
  if (!ha)
    return ha.error();
  return ha::cluster_path(ha->root, ha->cluster_id) + "/leader/" + component + "/connection_info";
}

expected<unit> cluster_client::reconnect_dispatcher(std::chrono::nanoseconds wait) {
  impl_->dispatcher = rpc::gateway{};
  return connect_leading_dispatcher(wait);
}

expected<unit> cluster_client::connect_dispatcher() {
  if (impl_->dispatcher.valid())
    return unit{};
  if (uses_zookeeper())
    return connect_leading_dispatcher(settings_.ask_timeout);
  auto found = connect(dispatcher::endpoint_name, "JobManager");
  if (!found)
    return found.error();
  impl_->dispatcher =
    rpc::gateway(std::move(*found), dispatcher::endpoint_name, leader::standalone_leader_id());
  return unit{};
}

namespace {

template <class M>
expected<typename M::response> ask(caf::actor_system& sys, const rpc::gateway& gw,
                                   const rpc::client_identity& who,
                                   const typename M::request& req) {
  if (!gw.valid())
    return make_error(errc::illegal_state, "not connected to the Dispatcher");
  caf::scoped_actor self{sys, true};
  return gw.ask_blocking<M>(*self, who, req);
}

} // namespace

expected<unit> cluster_client::submit_job(const graph::job_graph& job) {
  auto r =
    ask<dispatcher::submit_job>(*impl_->sys, impl_->dispatcher, impl_->who(settings_.ask_timeout),
                                dispatcher::submit_job_request{job});
  if (!r)
    return r.error();
  return unit{};
}

expected<dispatcher::job_list> cluster_client::list_jobs() {
  return ask<dispatcher::list_jobs>(*impl_->sys, impl_->dispatcher,
                                    impl_->who(settings_.ask_timeout), rpc::ack{});
}

expected<graph::job_status> cluster_client::job_status(const graph::job_id& job) {
  auto r = job_status_report(job);
  if (!r)
    return r.error();
  return r->status;
}

expected<job_master::job_status_response> cluster_client::job_status_report(
  const graph::job_id& job) {
  return ask<dispatcher::request_job_status>(*impl_->sys, impl_->dispatcher,
                                             impl_->who(settings_.ask_timeout),
                                             dispatcher::job_id_request{job});
}

expected<resource_manager::resource_overview> cluster_client::resource_overview() {
  auto rm = connect(resource_manager::endpoint_name, "ResourceManager");
  if (!rm)
    return rm.error();
  auto id = leader::standalone_leader_id();
  if (uses_zookeeper()) {
    // The ResourceManager leads under its own leader id, published beside the Dispatcher's.
    auto path = leader_path(resource_manager::endpoint_name);
    auto node = path ? impl_->zookeeper->get(*path) : expected<ha::zookeeper_node>(path.error());
    if (!node)
      return node.error();
    auto published = leader::decode_leader_address(node->data);
    if (!published)
      return make_error(errc::malformed_message, "malformed leader information at " + *path);
    id = published->session_id;
  }
  rpc::gateway gw(std::move(*rm), resource_manager::endpoint_name, id);
  return ask<resource_manager::request_resource_overview>(
    *impl_->sys, gw, impl_->who(settings_.ask_timeout), rpc::ack{});
}

expected<unit> cluster_client::cancel_job(const graph::job_id& job) {
  auto r =
    ask<dispatcher::cancel_job>(*impl_->sys, impl_->dispatcher, impl_->who(settings_.ask_timeout),
                                dispatcher::job_id_request{job});
  if (!r)
    return r.error();
  return unit{};
}

expected<std::string> cluster_client::trigger_savepoint(const graph::job_id& job,
                                                        const std::string& target_dir, bool stop,
                                                        std::chrono::nanoseconds timeout,
                                                        bool drain) {
  auto r = ask<dispatcher::trigger_savepoint>(
    *impl_->sys, impl_->dispatcher, impl_->who(timeout),
    dispatcher::trigger_savepoint_request{job, target_dir, stop, drain});
  if (!r)
    return r.error();
  return r->path;
}

expected<std::int64_t> cluster_client::trigger_checkpoint(const graph::job_id& job) {
  auto r = ask<dispatcher::trigger_checkpoint>(*impl_->sys, impl_->dispatcher,
                                               impl_->who(settings_.ask_timeout),
                                               dispatcher::job_id_request{job});
  if (!r)
    return r.error();
  return r->checkpoint_id;
}

expected<dispatcher::job_result> cluster_client::job_result(const graph::job_id& job,
                                                            std::chrono::nanoseconds timeout) {
  return ask<dispatcher::request_job_result>(*impl_->sys, impl_->dispatcher, impl_->who(timeout),
                                             dispatcher::job_id_request{job});
}

expected<trace::fetch_trace_response> cluster_client::fetch_trace(
  const caf::actor& trace_server, const trace::fetch_trace_request& req) {
  rpc::gateway gw(trace_server, trace::trace_endpoint_name);
  return ask<trace::fetch_trace>(*impl_->sys, gw, impl_->who(settings_.ask_timeout), req);
}

} // namespace flint::cli
