#include "runtime/streaming/local_cluster.hpp"

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/actors/minicluster/minicluster.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"
#include "runtime/streaming/output_initialization.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace flint::streaming {

struct local_cluster::impl {
  caf::actor_system_config config;
  std::unique_ptr<caf::actor_system> system;
  std::unique_ptr<trace::trace_recorder> recorder;
  /// One, or one per TaskExecutor (remote channels).
  std::vector<std::unique_ptr<streaming_environment>> envs;
  std::unique_ptr<minicluster::minicluster> cluster;
  std::optional<rpc::gateway> dispatcher;

  rpc::client_identity who(std::chrono::nanoseconds timeout = std::chrono::seconds(10)) const {
    return rpc::client_identity{"local_cluster_client", recorder.get(), timeout};
  }
};

local_cluster::local_cluster(local_cluster_options options) : impl_(std::make_unique<impl>()) {
  rpc::configure_node(impl_->config, {"stealing", 0, options.remote_channels, {}, {}});
  impl_->system = std::make_unique<caf::actor_system>(impl_->config);
  impl_->recorder = std::make_unique<trace::trace_recorder>(trace::system_now_us);
  auto environments = options.remote_channels ? std::max(options.task_managers, 1) : 1;
  std::vector<std::uint16_t> ports;
  for (int i = 0; i < environments; ++i) {
    auto& env = *impl_->envs.emplace_back(std::make_unique<streaming_environment>(options.network));
    if (options.write_stdout)
      env.set_stdout(options.write_stdout);
    if (options.remote_channels) {
      auto port = env.shuffle().enable_remote_channels(*impl_->system, "127.0.0.1", 0, "127.0.0.1");
      if (!port)
        throw std::runtime_error("local cluster: " + port.error().message);
      ports.push_back(*port);
    }
  }
  minicluster::minicluster_config mc;
  mc.number_of_task_managers = options.task_managers;
  mc.number_of_slots_per_task_manager = options.slots_per_task_manager;
  mc.detached_tasks = true;
  mc.metrics = options.metrics;
  mc.invokables = make_stream_task_factory(*impl_->envs.front());
  auto* self = impl_.get();
  const bool remote = options.remote_channels;
  mc.task_manager = [self, ports, remote](int number) {
    auto index = static_cast<std::size_t>(number - 1) % self->envs.size();
    auto shuffle = self->envs[index]->shuffle_ptr();
    minicluster::task_manager_services services;
    services.invokables = make_stream_task_factory(*self->envs[index]);
    services.holds_partitions = [shuffle](const graph::job_id& job) {
      return shuffle->num_partitions(job) > 0;
    };
    services.release_job_partitions = [shuffle](const graph::job_id& job) {
      shuffle->release_job(job);
    };
    services.release_partitions =
      [shuffle](const graph::job_id& job,
                const std::vector<graph::intermediate_result_partition_id>& ids) {
        shuffle->release_partitions(job, ids);
      };
    if (remote) {
      services.host = "127.0.0.1";
      services.data_port = ports[index];
    }
    return services;
  };
  impl_->cluster =
    std::make_unique<minicluster::minicluster>(*impl_->system, mc, impl_->recorder.get());
  impl_->cluster->start();
  impl_->dispatcher = impl_->cluster->await_dispatcher(std::chrono::seconds(30));
}

local_cluster::~local_cluster() {
  impl_->cluster->shutdown();
  for (auto& env : impl_->envs)
    env->await_tasks_released(std::chrono::seconds(30));
  // The partition servers and peer connections belong to the actor system: stop them first.
  for (auto& env : impl_->envs)
    env->shuffle().disable_remote_channels();
  impl_->cluster.reset();
  impl_->system.reset();
}

expected<unit> local_cluster::submit(std::shared_ptr<const graph::stream_graph> stream,
                                     std::shared_ptr<const graph::job_graph> job) {
  if (!impl_->dispatcher)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  if (auto outputs = initialize_outputs(*stream); !outputs)
    return outputs.error();
  for (auto& env : impl_->envs)
    env->add_program(stream, job);
  caf::scoped_actor self{*impl_->system, true};
  auto submitted = impl_->dispatcher->ask_blocking<dispatcher::submit_job>(
    *self, impl_->who(), dispatcher::submit_job_request{*job});
  if (!submitted)
    return submitted.error();
  return unit{};
}

expected<dispatcher::job_result> local_cluster::result(const graph::job_id& job,
                                                       std::chrono::nanoseconds timeout) {
  if (!impl_->dispatcher)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  caf::scoped_actor self{*impl_->system, true};
  auto done = impl_->dispatcher->ask_blocking<dispatcher::request_job_result>(
    *self, impl_->who(timeout), dispatcher::job_id_request{job});
  // The job ended everywhere: its blocking partitions have no reader to wait for. The
  // TaskExecutors release them when the stopping JobMaster disconnects, which is after the result
  // is out; the caller of result() sees them gone already.
  if (done)
    for (auto& env : impl_->envs)
      env->shuffle().release_job(job);
  return done;
}

expected<dispatcher::job_result> local_cluster::execute(
  std::shared_ptr<const graph::stream_graph> stream, std::shared_ptr<const graph::job_graph> job,
  std::chrono::nanoseconds timeout) {
  auto id = job->job_id;
  if (auto ok = submit(std::move(stream), std::move(job)); !ok)
    return ok.error();
  return result(id, timeout);
}

expected<unit> local_cluster::cancel(const graph::job_id& job) {
  if (!impl_->dispatcher)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  caf::scoped_actor self{*impl_->system, true};
  auto r = impl_->dispatcher->ask_blocking<dispatcher::cancel_job>(*self, impl_->who(),
                                                                   dispatcher::job_id_request{job});
  if (!r)
    return r.error();
  return unit{};
}

expected<std::string> local_cluster::stop_with_savepoint(const graph::job_id& job,
                                                         const std::string& directory, bool drain) {
  if (!impl_->dispatcher)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  caf::scoped_actor self{*impl_->system, true};
  auto r = impl_->dispatcher->ask_blocking<dispatcher::trigger_savepoint>(
    *self, impl_->who(), dispatcher::trigger_savepoint_request{job, directory, true, drain});
  if (!r)
    return r.error();
  return r->path;
}

expected<graph::job_status> local_cluster::status(const graph::job_id& job) {
  if (!impl_->dispatcher)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  caf::scoped_actor self{*impl_->system, true};
  auto r = impl_->dispatcher->ask_blocking<dispatcher::request_job_status>(
    *self, impl_->who(), dispatcher::job_id_request{job});
  if (!r)
    return r.error();
  return r->status;
}

streaming_environment& local_cluster::streaming(std::size_t index) noexcept {
  return *impl_->envs[index < impl_->envs.size() ? index : 0];
}

std::size_t local_cluster::num_environments() const noexcept {
  return impl_->envs.size();
}

minicluster::minicluster& local_cluster::cluster() noexcept {
  return *impl_->cluster;
}

trace::trace_recorder& local_cluster::recorder() noexcept {
  return *impl_->recorder;
}

} // namespace flint::streaming
