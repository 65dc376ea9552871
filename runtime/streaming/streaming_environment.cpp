#include "runtime/streaming/streaming_environment.hpp"

#include "runtime/network/transport/partition_server_connection.hpp"
#include "runtime/streaming/remote_channels.hpp"
#include "runtime/streaming/stream_task.hpp"

#include <iostream>

#include <caf/actor_system.hpp>
#include <caf/io/middleman.hpp>

namespace flint::streaming {

struct streaming_environment::programs {
  std::mutex mutex;
  std::map<graph::job_id, job_program> by_job;
};

streaming_environment::streaming_environment(network::network_config config)
  : shuffle_(std::make_shared<shuffle_environment>(config)), programs_(std::make_shared<programs>()) {
  auto lock = std::make_shared<std::mutex>();
  write_stdout_ = [lock](std::string_view text) {
    std::lock_guard<std::mutex> guard{*lock};
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::cout.flush();
  };
}

streaming_environment::~streaming_environment() {
  disable_remote_channels();
}

expected<std::uint16_t> streaming_environment::enable_remote_channels(caf::actor_system& sys,
                                                                    std::string advertised_host, std::uint16_t port,
                                                                    std::string bind_address) {
  if (shuffle_->remote())
    return make_error(errc::illegal_state, "remote channels are enabled already (data port " +
                                             std::to_string(shuffle_->remote()->data_port()) + ")");
  if (!sys.has_middleman())
    return make_error(errc::invalid_argument, "remote channels need an actor system with CAF's middleman");
  auto server = spawn_partition_server(sys, shuffle_);
  auto bound = sys.middleman().publish(server, port, bind_address.empty() ? nullptr : bind_address.c_str(), true);
  if (!bound) {
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return make_error(errc::unreachable, "cannot listen for partition requests on " +
                                           (bind_address.empty() ? std::string("*") : bind_address) + ":" +
                                           std::to_string(port) + ": " + sys.render(bound.error()));
  }
  auto* system = &sys;
  auto connect = [system](const std::string& host, std::uint16_t peer_port) {
    return network::transport::connect_partition_server(*system, host, peer_port);
  };
  remote_system_ = &sys;
  shuffle_->set_remote(std::make_shared<remote_channels>(std::move(advertised_host), *bound, server, connect));
  return *bound;
}

void streaming_environment::disable_remote_channels() {
  auto remote = shuffle_->remote();
  if (!remote)
    return;
  shuffle_->set_remote(nullptr);
  if (remote_system_)
    (void)remote_system_->middleman().unpublish(remote->server(), remote->data_port());
  remote_system_ = nullptr;
  caf::anon_send_exit(remote->server(), caf::exit_reason::user_shutdown);
}

std::uint16_t streaming_environment::data_port() const {
  auto remote = shuffle_->remote();
  return remote ? remote->data_port() : 0;
}

void streaming_environment::add_program(std::shared_ptr<const graph::stream_graph> stream,
                                        std::shared_ptr<const graph::job_graph> job) {
  std::lock_guard<std::mutex> guard{programs_->mutex};
  auto id = job->job_id;
  programs_->by_job[id] = job_program{std::move(stream), std::move(job)};
}

task_executor::invokable_factory make_stream_task_factory(std::shared_ptr<const graph::stream_graph> stream,
                                                          std::shared_ptr<const graph::job_graph> job,
                                                          streaming_environment& env) {
  job_program program{std::move(stream), std::move(job)};
  auto shuffle = env.shuffle_ptr();
  auto write = env.stdout_writer();
  return [program, shuffle, write](const graph::task_deployment_descriptor& tdd) -> std::unique_ptr<task_executor::invokable> {
    return std::make_unique<stream_task>(program, tdd, shuffle, write);
  };
}

task_executor::invokable_factory make_stream_task_factory(streaming_environment& env) {
  auto programs = env.programs_;
  auto shuffle = env.shuffle_ptr();
  auto write = env.stdout_writer();
  return [programs, shuffle, write](const graph::task_deployment_descriptor& tdd) -> std::unique_ptr<task_executor::invokable> {
    job_program program;
    {
      std::lock_guard<std::mutex> guard{programs->mutex};
      if (auto it = programs->by_job.find(tdd.job_id); it != programs->by_job.end())
        program = it->second;
    }
    // An unknown job fails in before_invoke with a clear message.
    return std::make_unique<stream_task>(program, tdd, shuffle, write);
  };
}

} // namespace flint::streaming
