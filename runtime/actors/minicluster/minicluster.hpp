#pragma once
/// A whole cluster in one process (Flink's MiniCluster, §4.1): embedded HA services, heartbeat
/// settings, a ResourceManager, a Dispatcher and N TaskExecutors, all real endpoints speaking
/// the same envelopes as a distributed cluster. Works on CAF's real scheduler (apps,
/// benchmarks) and on the deterministic test coordinator (protocol tests): `start` only spawns;
/// the blocking `execute` is for real schedulers.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "runtime/config/configuration.hpp"
#include <caf/fwd.hpp>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/heartbeat/heartbeat_config.hpp"
#include "runtime/actors/leader/ha_services.hpp"
#include "runtime/actors/registration/registration_response.hpp"
#include "runtime/actors/registration/retrying_registration.hpp"
#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/gateway.hpp"
#include "runtime/actors/rpc/rpc_config.hpp"
#include "runtime/actors/task_executor/invokable.hpp"

namespace flint::trace {
class trace_recorder;
}
namespace flint::metrics {
class metric_registry;
}

namespace flint::minicluster {

/// What one TaskExecutor of the MiniCluster runs with when TaskExecutors differ: each with a data
/// plane of its own (its own shuffle environment, reached at host:data_port), as on separate
/// TaskManager processes.
struct task_manager_services {
  task_executor::invokable_factory invokables;
  /// The TaskExecutor's view of its shuffle's partitions (see task_executor_services).
  std::function<bool(const graph::job_id&)> holds_partitions;
  std::function<void(const graph::job_id&)> release_job_partitions;
  std::function<void(const graph::job_id&,
                     const std::vector<graph::intermediate_result_partition_id>&)>
    release_partitions;
  /// The TaskManagerLocation it advertises; data_port 0: its producers are in this process.
  std::string host = "localhost";
  std::uint16_t data_port = 0;
};

struct minicluster_config {
  /// `local.number-taskmanager`
  int number_of_task_managers = 1;
  /// `taskmanager.numberOfTaskSlots`
  int number_of_slots_per_task_manager = 1;
  heartbeat::heartbeat_config heartbeat;
  registration::retrying_registration_config registration;
  /// `slot.request.timeout`
  std::chrono::nanoseconds slot_request_timeout = std::chrono::minutes(5);
  /// `slot.idle.timeout`
  std::chrono::nanoseconds slot_idle_timeout = std::chrono::seconds(50);
  /// `resourcemanager.taskmanager-timeout`
  std::chrono::nanoseconds task_manager_timeout = std::chrono::seconds(30);
  rpc::rpc_config rpc;
  /// Tasks on their own threads (production) or on the actor scheduler (deterministic tests).
  bool detached_tasks = true;
  /// Wait for every endpoint to stop in shutdown() (real schedulers). Deterministic tests set
  /// false, call shutdown() and run the scheduler before the minicluster goes away.
  bool blocking_shutdown = true;
  /// The cluster's configuration, as the JobMasters read it (`restart-strategy.*`, ...).
  config::configuration configuration;
  /// Seeds the leader session ids.
  std::uint64_t seed = 0x5eed;
  /// What tasks run; empty: every task finishes at once.
  task_executor::invokable_factory invokables;
  /// Where the TaskExecutors register their tasks' figures (a TaskManager node's registry);
  /// null: the tasks count nothing.
  std::shared_ptr<metrics::metric_registry> metrics;
  /// Per TaskExecutor (by its 1-based number): what it runs and where its data plane listens.
  /// Empty: every TaskExecutor runs `invokables` at data port 0.
  std::function<task_manager_services(int number)> task_manager;
};

class minicluster {
public:
  minicluster(caf::actor_system& sys, minicluster_config config, trace::trace_recorder* recorder);
  ~minicluster();
  minicluster(const minicluster&) = delete;
  minicluster& operator=(const minicluster&) = delete;

  /// Spawns the ResourceManager, the Dispatcher and the TaskExecutors (non-blocking).
  void start();
  /// Spawns one more TaskExecutor; returns its handle.
  caf::actor add_task_manager();
  /// Stops every endpoint (TaskExecutors first, as Flink's MiniCluster does).
  void shutdown();

  /// The Dispatcher's gateway once it leads (carries the DispatcherId).
  std::optional<rpc::gateway> dispatcher_gateway() const;
  /// Waits (real time) for the Dispatcher to lead. For real schedulers only.
  std::optional<rpc::gateway> await_dispatcher(std::chrono::nanoseconds timeout) const;

  /// Submits `job` and waits for its result. For real schedulers only.
  expected<dispatcher::job_result> execute(const graph::job_graph& job,
                                           std::chrono::nanoseconds timeout);

  leader::embedded_ha_services& ha() { return ha_; }
  rpc::endpoint_directory& directory() { return directory_; }
  const caf::actor& resource_manager() const { return resource_manager_; }
  const caf::actor& dispatcher() const { return dispatcher_; }
  const std::vector<caf::actor>& task_managers() const { return task_managers_; }

private:
  class dispatcher_follower;

  rpc::endpoint_context context(std::string endpoint_id) const;

  caf::actor_system& sys_;
  minicluster_config config_;
  trace::trace_recorder* recorder_;
  leader::embedded_ha_services ha_;
  rpc::endpoint_directory directory_;
  std::unique_ptr<dispatcher_follower> follower_;
  std::unique_ptr<leader::leader_retrieval_service> dispatcher_retrieval_;
  std::unique_ptr<leader::leader_election_service> resource_manager_election_;
  caf::actor resource_manager_;
  caf::actor dispatcher_;
  std::vector<caf::actor> task_managers_;
  bool running_ = false;
};

} // namespace flint::minicluster
