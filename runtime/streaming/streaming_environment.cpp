#include "runtime/streaming/streaming_environment.hpp"

#include "runtime/streaming/stream_task.hpp"

#include <iostream>

namespace flint::streaming {

struct streaming_environment::programs {
  std::mutex mutex;
  std::map<graph::job_id, job_program> by_job;
};

streaming_environment::streaming_environment(network::network_config config)
  : shuffle_(std::make_shared<network::shuffle_environment>(config)),
    programs_(std::make_shared<programs>()) {
  auto lock = std::make_shared<std::mutex>();
  write_stdout_ = [lock](std::string_view text) {
    std::lock_guard<std::mutex> guard{*lock};
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::cout.flush();
  };
}

streaming_environment::~streaming_environment() {
  shuffle_->disable_remote_channels();
}

void streaming_environment::add_program(std::shared_ptr<const graph::stream_graph> stream,
                                        std::shared_ptr<const graph::job_graph> job) {
  std::lock_guard<std::mutex> guard{programs_->mutex};
  auto id = job->job_id;
  programs_->by_job[id] = job_program{std::move(stream), std::move(job)};
}

task_executor::invokable_factory make_stream_task_factory(
  std::shared_ptr<const graph::stream_graph> stream, std::shared_ptr<const graph::job_graph> job,
  streaming_environment& env) {
  job_program program{std::move(stream), std::move(job)};
  auto shuffle = env.shuffle_ptr();
  auto write = env.stdout_writer();
  auto local_state = env.local_state();
  return
    [program, shuffle, write, local_state](
      const graph::task_deployment_descriptor& tdd) -> std::unique_ptr<task_executor::invokable> {
      return std::make_unique<stream_task>(program, tdd, shuffle, write, local_state);
    };
}

task_executor::invokable_factory make_stream_task_factory(streaming_environment& env) {
  auto programs = env.programs_;
  auto shuffle = env.shuffle_ptr();
  auto write = env.stdout_writer();
  auto local_state = env.local_state();
  return
    [programs, shuffle, write, local_state](
      const graph::task_deployment_descriptor& tdd) -> std::unique_ptr<task_executor::invokable> {
      job_program program;
      {
        std::lock_guard<std::mutex> guard{programs->mutex};
        if (auto it = programs->by_job.find(tdd.job_id); it != programs->by_job.end())
          program = it->second;
      }
      // An unknown job fails in before_invoke with a clear message.
      return std::make_unique<stream_task>(program, tdd, shuffle, write, local_state);
    };
}

} // namespace flint::streaming
