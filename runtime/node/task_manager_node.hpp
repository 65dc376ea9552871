#pragma once
/// A TaskManager process of a standalone cluster (Flink's TaskManagerRunner): its own actor
/// system, standalone HA services that resolve the ResourceManager and the JobMasters at
/// `jobmanager.rpc.address:jobmanager.rpc.port`, one TaskExecutor with
/// `taskmanager.numberOfTaskSlots` slots, a streaming environment whose shuffle serves its
/// partitions to other processes on `taskmanager.data.port` (remote channels), and the node's
/// locator on `taskmanager.rpc.port` (0: any free port).
///
/// Tasks are made by the job library factory (jobs uploaded to the blob server) when it is
/// built; a factory passed in replaces it (tests with compiled-in programs pass
/// `streaming::make_stream_task_factory(env)` and add their programs to `streaming()`).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <caf/fwd.hpp>

#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/task_executor/invokable.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/node/node_settings.hpp"

namespace flint::streaming {
class streaming_environment;
}
namespace flint::trace {
class trace_recorder;
}

namespace flint::node {

/// Where the leading JobManager process is now (host, port): fixed in a standalone cluster, the
/// Dispatcher leader ZooKeeper names with HA; nullopt while none is known. Thread-safe.
using job_manager_locator = std::function<std::optional<std::pair<std::string, std::uint16_t>>()>;

struct task_manager_node_services {
  /// Makes the TaskExecutor's task factory from the node's streaming environment, its resource
  /// id and where the JobManager is. `flint-node` passes the job library factory
  /// (api/job_library.hpp: the layer above the runtime); empty: compiled-in programs of
  /// `streaming()`.
  std::function<task_executor::invokable_factory(
    caf::actor_system&, streaming::streaming_environment&, const std::string& resource_id,
    job_manager_locator job_manager)>
    make_invokables;
  /// Where print sinks write (thread-safe); empty: std::cout.
  std::function<void(std::string_view)> write_stdout;
};

class task_manager_node {
public:
  explicit task_manager_node(task_manager_settings settings,
                             task_manager_node_services services = {},
                             rpc::node_options caf_options = {});
  /// Shuts down if still running.
  ~task_manager_node();
  task_manager_node(const task_manager_node&) = delete;
  task_manager_node& operator=(const task_manager_node&) = delete;

  /// Starts the actor system, publishes the locator and the data port, spawns the TaskExecutor
  /// (which then registers at the ResourceManager, retrying until the JobManager is there).
  expected<unit> start();
  /// Stops the TaskExecutor (its tasks are cancelled), waits until every task released its
  /// buffers, closes the ports. Idempotent.
  void shutdown();

  bool running() const noexcept;
  std::uint16_t rpc_port() const noexcept;
  /// The Prometheus reporter's port (0: none runs).
  std::uint16_t metrics_port() const noexcept;
  /// The data port consumers on other TaskManagers connect to (0 without remote channels).
  std::uint16_t data_port() const noexcept;
  /// The address published to the JobManager.
  const std::string& host() const noexcept;
  /// The TaskExecutor's resource id (also its endpoint id: "task_executor/<id>").
  const std::string& resource_id() const noexcept;
  const task_manager_settings& settings() const noexcept;
  /// Whether this build exchanges data with other processes (remote channels): always, since the
  /// shuffle environment has them.
  static bool remote_channels_available() noexcept;

  caf::actor_system& system();
  rpc::endpoint_directory& directory();
  trace::trace_recorder& recorder();
  streaming::streaming_environment& streaming();
  const caf::actor& task_executor() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace flint::node
