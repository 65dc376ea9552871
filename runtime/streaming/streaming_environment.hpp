#pragma once
/// What the data plane of one process shares (the TaskExecutors of a MiniCluster): the shuffle
/// environment, where print sinks write, and the compiled-in programs tasks may run.

#include "runtime/actors/task_executor/invokable.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/streaming/shuffle_environment.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <caf/fwd.hpp>

namespace flint::streaming {

class streaming_environment {
public:
  /// Print sinks write to std::cout (whole batches of lines under one lock).
  explicit streaming_environment(network::network_config config = {});
  /// Disables remote channels (their actor system must still be alive then).
  ~streaming_environment();
  streaming_environment(const streaming_environment&) = delete;
  streaming_environment& operator=(const streaming_environment&) = delete;

  shuffle_environment& shuffle() noexcept { return *shuffle_; }
  const std::shared_ptr<shuffle_environment>& shuffle_ptr() const noexcept { return shuffle_; }

  /// Where print sinks write from now on; must be thread-safe.
  void set_stdout(std::function<void(std::string_view)> write) { write_stdout_ = std::move(write); }
  const std::function<void(std::string_view)>& stdout_writer() const noexcept { return write_stdout_; }

  /// Makes a compiled-in program runnable by the factory of `make_stream_task_factory(env)`.
  void add_program(std::shared_ptr<const graph::stream_graph> stream, std::shared_ptr<const graph::job_graph> job);

  /// Publishes this process's partition request server on `port` (0 = any free port; Flink's
  /// taskmanager.data.port) at `bind_address` (empty: every interface), and from now on reaches
  /// producers on other processes over CAF's middleman (`sys` must have it loaded). Returns the
  /// bound port: the TaskExecutor's data_port, which it advertises with `advertised_host`.
  /// Channels whose producer has another (host, data_port) become remote; tasks created earlier
  /// keep local channels.
  expected<std::uint16_t> enable_remote_channels(caf::actor_system& sys, std::string advertised_host,
                                                 std::uint16_t port, std::string bind_address);
  /// Stops the partition request server and forgets the peers; call it before `sys` goes away
  /// (the destructor does it too, which is fine while `sys` lives).
  void disable_remote_channels();
  /// The data port of enable_remote_channels, 0 while disabled.
  std::uint16_t data_port() const;

  /// Waits (real time) until every stream task released its resources.
  bool await_tasks_released(std::chrono::milliseconds timeout) const { return shuffle_->await_no_tasks(timeout); }

private:
  friend task_executor::invokable_factory make_stream_task_factory(streaming_environment& env);

  struct programs;

  std::shared_ptr<shuffle_environment> shuffle_;
  std::function<void(std::string_view)> write_stdout_;
  std::shared_ptr<programs> programs_;
  caf::actor_system* remote_system_ = nullptr;
};

/// Stream tasks of one compiled-in job (DESIGN.md "Job code": compiled-in jobs skip the library
/// step); tasks of any other job fail clearly.
task_executor::invokable_factory make_stream_task_factory(std::shared_ptr<const graph::stream_graph> stream,
                                                          std::shared_ptr<const graph::job_graph> job,
                                                          streaming_environment& env);

/// Stream tasks of every program added to `env` with add_program, found by job id.
task_executor::invokable_factory make_stream_task_factory(streaming_environment& env);

} // namespace flint::streaming
