#pragma once
/// The client side of a Flint cluster for the CLI: an actor system with CAF's middleman, the
/// Dispatcher's gateway at -m host:port (fenced with the standalone DispatcherId), the node's
/// other endpoints by id (blob server, trace), and blocking asks with the command's timeout.
/// Error messages are the ones the CLI prints.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "apps/cli/cli_settings.hpp"
#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/trace_server/trace_server_gateway.hpp"
#include "runtime/common/expected.hpp"

namespace flint::cli {

/// Endpoint id the CLI's calls carry (what traces show as the caller).
inline constexpr const char* client_endpoint_id = "flint-cli";

class cluster_client {
public:
  explicit cluster_client(const cli_settings& settings);
  ~cluster_client();
  cluster_client(const cluster_client&) = delete;
  cluster_client& operator=(const cluster_client&) = delete;

  caf::actor_system& system();
  const cli_settings& settings() const { return settings_; }

  /// Looks up `endpoint_id` at the configured address. An unreachable node gives
  /// "Could not connect to the <role> at host:port: <why>".
  expected<caf::actor> connect(const std::string& endpoint_id, const std::string& role);

  /// Connects to the Dispatcher (once); every job call below needs it. With ZooKeeper HA and no
  /// -m, the leading Dispatcher is read from ZooKeeper (waiting up to the ask timeout for one).
  expected<unit> connect_dispatcher();
  /// Whether the Dispatcher is found through ZooKeeper (HA configured, no -m).
  bool uses_zookeeper() const;
  /// Follows a leader change: the Dispatcher ZooKeeper names now, waiting up to `wait` for one.
  expected<unit> reconnect_dispatcher(std::chrono::nanoseconds wait);

  expected<unit> submit_job(const graph::job_graph& job);
  expected<dispatcher::job_list> list_jobs();
  expected<graph::job_status> job_status(const graph::job_id& job);
  /// The status with the job's exception history and what it waits for.
  expected<job_master::job_status_response> job_status_report(const graph::job_id& job);
  /// The ResourceManager's TaskManagers and slots (connects to it first).
  expected<resource_manager::resource_overview> resource_overview();
  expected<unit> cancel_job(const graph::job_id& job);
  /// Flink's triggerSavepoint / stopWithSavepoint: the savepoint's path once it completed.
  expected<std::string> trigger_savepoint(const graph::job_id& job, const std::string& target_dir,
                                          bool stop, std::chrono::nanoseconds timeout,
                                          bool drain = false);
  /// Flink's triggerCheckpoint: the id of the checkpoint the job's coordinator started.
  expected<std::int64_t> trigger_checkpoint(const graph::job_id& job);
  /// Waits up to `timeout` for the job to reach a globally terminal state.
  expected<dispatcher::job_result> job_result(const graph::job_id& job,
                                              std::chrono::nanoseconds timeout);

  /// One poll of a node's trace server (`trace_server` from `connect(trace_endpoint_name, ...)`).
  expected<trace::fetch_trace_response> fetch_trace(const caf::actor& trace_server,
                                                    const trace::fetch_trace_request& req);

private:
  expected<unit> connect_leading_dispatcher(std::chrono::nanoseconds wait);
  /// `<root>/<cluster-id>/leader/<component>/connection_info`.
  expected<std::string> leader_path(const std::string& component) const;

  struct impl;
  cli_settings settings_;
  std::unique_ptr<impl> impl_;
};

/// "host:port" of the settings' address.
std::string where(const cli_settings& s);

} // namespace flint::cli
