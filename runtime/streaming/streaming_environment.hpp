#pragma once
/// What the data plane of one process shares (the TaskExecutors of a MiniCluster): the shuffle
/// environment, where print sinks write, and the compiled-in programs tasks may run.

#include "runtime/actors/task_executor/invokable.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/streaming/local_state_root.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace flint::streaming {

class streaming_environment {
public:
  /// Print sinks write to std::cout (whole batches of lines under one lock).
  explicit streaming_environment(network::network_config config = {});
  /// Disables remote channels (their actor system must still be alive then).
  ~streaming_environment();
  streaming_environment(const streaming_environment&) = delete;
  streaming_environment& operator=(const streaming_environment&) = delete;

  /// The process's shuffle: partitions, gates and remote channels
  /// (shuffle().enable_remote_channels(...) serves partitions to other processes).
  network::shuffle_environment& shuffle() noexcept { return *shuffle_; }
  const std::shared_ptr<network::shuffle_environment>& shuffle_ptr() const noexcept {
    return shuffle_;
  }

  /// Where print sinks write from now on; must be thread-safe.
  void set_stdout(std::function<void(std::string_view)> write) { write_stdout_ = std::move(write); }
  const std::function<void(std::string_view)>& stdout_writer() const noexcept {
    return write_stdout_;
  }

  /// Where this process's tasks keep their local state: a private directory made on first use,
  /// removed when the environment and the last task holding it are gone.
  const std::shared_ptr<local_state_root>& local_state() const noexcept { return local_state_; }

  /// Makes a compiled-in program runnable by the factory of `make_stream_task_factory(env)`.
  void add_program(std::shared_ptr<const graph::stream_graph> stream,
                   std::shared_ptr<const graph::job_graph> job);

  /// Waits (real time) until every stream task released its resources.
  bool await_tasks_released(std::chrono::milliseconds timeout) const {
    return shuffle_->await_no_tasks(timeout);
  }

private:
  friend task_executor::invokable_factory make_stream_task_factory(streaming_environment& env);

  struct programs;

  std::shared_ptr<network::shuffle_environment> shuffle_;
  std::function<void(std::string_view)> write_stdout_;
  std::shared_ptr<programs> programs_;
  std::shared_ptr<local_state_root> local_state_ = std::make_shared<local_state_root>();
};

/// Stream tasks of one compiled-in job (DESIGN.md "Job code": compiled-in jobs skip the library
/// step); tasks of any other job fail clearly.
task_executor::invokable_factory make_stream_task_factory(
  std::shared_ptr<const graph::stream_graph> stream, std::shared_ptr<const graph::job_graph> job,
  streaming_environment& env);

/// Stream tasks of every program added to `env` with add_program, found by job id.
task_executor::invokable_factory make_stream_task_factory(streaming_environment& env);

} // namespace flint::streaming
