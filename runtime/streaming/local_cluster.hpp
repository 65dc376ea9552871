#pragma once
/// A MiniCluster with the data plane, in one call (Flink's LocalStreamEnvironment): an actor
/// system, a streaming environment shared by N TaskExecutors, and execute() for compiled-in
/// programs. What `wordcount`, the benchmarks and the end-to-end tests run on.

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/common/expected.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/streaming/streaming_environment.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

namespace flint::metrics {
class metric_registry;
}

namespace flint::trace {
class trace_recorder;
}

namespace flint::minicluster {
class minicluster;
}

namespace flint::streaming {

struct local_cluster_options {
  /// `local.number-taskmanager`.
  int task_managers = 1;
  /// `taskmanager.numberOfTaskSlots`.
  int slots_per_task_manager = 1;
  network::network_config network;
  /// Where print sinks write; std::cout when empty.
  std::function<void(std::string_view)> write_stdout;
  /// Each TaskExecutor gets a streaming environment of its own with remote channels enabled on
  /// 127.0.0.1 (a free data port each), so every channel between two TaskExecutors goes through
  /// the partition request server and CAF's middleman, as between TaskManager processes.
  bool remote_channels = false;
  /// The TaskExecutors' tasks register and count their figures here (as on a TaskManager node);
  /// null: they count nothing.
  std::shared_ptr<metrics::metric_registry> metrics;
};

class local_cluster {
public:
  /// Starts the cluster and waits (real time) until its Dispatcher leads.
  explicit local_cluster(local_cluster_options options);
  /// Stops the cluster and waits until every task released its buffers.
  ~local_cluster();
  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  /// Runs the program to its end (blocking).
  expected<dispatcher::job_result> execute(
    std::shared_ptr<const graph::stream_graph> stream, std::shared_ptr<const graph::job_graph> job,
    std::chrono::nanoseconds timeout = std::chrono::hours(24));
  /// Submits without waiting.
  expected<unit> submit(std::shared_ptr<const graph::stream_graph> stream,
                        std::shared_ptr<const graph::job_graph> job);
  /// Cancels a job (blocking ask).
  expected<unit> cancel(const graph::job_id& job);
  /// Stops `job` with a savepoint in `directory` (with `drain`: event time to its end first);
  /// the savepoint's path.
  expected<std::string> stop_with_savepoint(const graph::job_id& job, const std::string& directory,
                                            bool drain);
  /// The job's status (blocking ask).
  expected<graph::job_status> status(const graph::job_id& job);
  /// Waits for the job's result, then releases the job's partitions (its blocking ones stay
  /// until then).
  expected<dispatcher::job_result> result(const graph::job_id& job,
                                          std::chrono::nanoseconds timeout);

  /// The streaming environment of TaskExecutor `index` (0-based); all share the first one unless
  /// `remote_channels` is set.
  streaming_environment& streaming(std::size_t index = 0) noexcept;
  /// How many streaming environments there are (1, or one per TaskExecutor).
  std::size_t num_environments() const noexcept;
  minicluster::minicluster& cluster() noexcept;
  /// The message trace every endpoint and task of this cluster records into.
  trace::trace_recorder& recorder() noexcept;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace flint::streaming
