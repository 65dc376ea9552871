#pragma once
/// The JobManager process of a standalone cluster (Flink's StandaloneSessionClusterEntrypoint):
/// its own actor system with CAF's middleman, standalone HA services (every leader here, under
/// `standalone_leader_id()`), a ResourceManager, a Dispatcher (one JobMaster per job), the blob
/// server and the trace server when they are built, and the node's locator published on
/// `jobmanager.rpc.port` at `jobmanager.bind-host`. Peers find endpoints there by id
/// (rpc_service.hpp, contract B): "dispatcher", "resource_manager", "job_master/<job>",
/// "blob_server", "trace".
///
/// Used by `flint-node jobmanager` and, in-process, by tests (several nodes in one process,
/// each with its own actor system, talk over loopback exactly as processes do).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/node/node_settings.hpp"
#include "runtime/rest/job_program_builder.hpp"

namespace flint::trace {
class trace_recorder;
}

namespace flint::node {

/// What the host gives the JobManager beyond its settings (as task_manager_node_services).
struct job_manager_node_services {
  /// How REST's /jars/:jarid/run and /plan build uploaded libraries' jobs (flint-node:
  /// api::make_rest_job_program_builder); empty: REST runs no job libraries.
  rest::job_program_builder job_programs;
};

class job_manager_node {
public:
  explicit job_manager_node(job_manager_settings settings, rpc::node_options caf_options = {},
                            job_manager_node_services services = {});
  /// Shuts down if still running.
  ~job_manager_node();
  job_manager_node(const job_manager_node&) = delete;
  job_manager_node& operator=(const job_manager_node&) = delete;

  /// Starts the actor system and the endpoints and publishes the locator. Fails (nothing left
  /// running) when the port cannot be bound.
  expected<unit> start();
  /// Stops the Dispatcher (and with it every JobMaster), the ResourceManager and the servers,
  /// waits until they ended, closes the port. Idempotent.
  void shutdown();

  bool running() const noexcept;
  /// The bound RPC port (the configured one, or the one picked for port 0).
  std::uint16_t rpc_port() const noexcept;
  /// The Prometheus reporter's port (0: none runs).
  std::uint16_t metrics_port() const noexcept;
  /// The REST endpoint's port (0: none runs; settings().rest.enabled starts it).
  std::uint16_t rest_port() const noexcept;
  const job_manager_settings& settings() const noexcept;
  /// The blob server's storage directory: `blob.storage.directory`, or the private directory
  /// start() made (empty before).
  const std::filesystem::path& blob_storage_directory() const noexcept;
  /// Endpoint ids published on the locator, for the ready line and logs.
  std::vector<std::string> endpoints() const;

  caf::actor_system& system();
  rpc::endpoint_directory& directory();
  trace::trace_recorder& recorder();
  const caf::actor& dispatcher() const;
  const caf::actor& resource_manager() const;
  /// The leader id this node's `endpoint_id` ("dispatcher", "resource_manager") leads under: the
  /// standalone one, or with ZooKeeper HA the one published for it if this node is the leader
  /// (nil otherwise).
  rpc::fencing_token leader_id(const std::string& endpoint_id) const;
  /// The Dispatcher's gateway, fenced with leader_id("dispatcher").
  rpc::gateway dispatcher_gateway() const;
  /// The ResourceManager's gateway, fenced with leader_id("resource_manager").
  rpc::gateway resource_manager_gateway() const;
  /// With ZooKeeper HA, the REST URL of the leading JobManager (its Dispatcher's), as it
  /// published it (ha::rest_endpoint_path), when that is another node; nullopt otherwise. A
  /// standby's REST endpoint forwards calls that need the leader there.
  std::optional<std::string> leader_rest_url() const;

private:
  /// Starts the REST endpoint; one that cannot bind is logged and the node runs without it.
  void start_rest();
  /// With ZooKeeper HA, writes this node's REST URL under its RPC address (ephemeral).
  void publish_rest_endpoint(const std::string& url);
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace flint::node
