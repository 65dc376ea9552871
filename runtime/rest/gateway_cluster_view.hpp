#pragma once
/// The cluster_view of a JobManager process: each call is an ask from its own scoped actor to
/// the gateway the node gives at that moment (the leader may have changed since the last call).
/// A node that does not lead answers errc::unreachable with Flink's leader-election message.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/config/configuration.hpp"
#include "runtime/rest/cluster_view.hpp"
#include "runtime/rest/job_program_builder.hpp"

namespace flint::rest {

struct gateway_providers {
  std::function<rpc::gateway()> dispatcher;
  std::function<rpc::gateway()> resource_manager;
  /// Unfenced: any node serves its own trace.
  std::function<rpc::gateway()> trace;
  /// The node's blob server, where run_library uploads; empty: no library can be run.
  std::function<caf::actor()> blob_server;
  /// The handle of the TaskExecutor with this endpoint id (one registered at the node's
  /// ResourceManager), invalid when unknown; empty: TaskManagers' files cannot be asked for.
  std::function<caf::actor(const std::string&)> task_executor;
  /// Builds and uploads the jobs of uploaded libraries (/jars/:jarid/run, /plan); empty: the
  /// node runs none.
  job_program_builder job_programs;
  /// The leading JobManager's REST URL while this node does not lead (cluster_view's
  /// leader_rest_url); empty: never known (a standalone node leads itself).
  std::function<std::optional<std::string>()> leader_rest_url;
};

/// The caller id REST calls carry (what traces show).
inline constexpr const char* rest_endpoint_id = "rest";

/// `configuration`: the node's, what run_library builds jobs with (config::job_configuration).
std::shared_ptr<cluster_view> make_gateway_cluster_view(caf::actor_system& system,
                                                        gateway_providers gateways,
                                                        std::chrono::nanoseconds ask_timeout,
                                                        config::configuration configuration);

} // namespace flint::rest
