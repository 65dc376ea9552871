#include "runtime/actors/minicluster/minicluster.hpp"

#include <caf/all.hpp>

#include "runtime/actors/dispatcher/dispatcher.hpp"
#include "runtime/actors/resource_manager/resource_manager.hpp"
#include "runtime/actors/task_executor/task_executor.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"
#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::minicluster {

/// Follows the Dispatcher's leadership to hand out a gateway with the current DispatcherId.
class minicluster::dispatcher_follower : public leader::leader_retrieval_listener {
public:
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token& id) override {
    std::lock_guard<std::mutex> guard(mtx_);
    if (address.handle && !id.is_nil())
      current_ = rpc::gateway(address.handle, address.endpoint_id, id);
    else
      current_.reset();
    changed_.notify_all();
  }

  std::optional<rpc::gateway> current() const {
    std::lock_guard<std::mutex> guard(mtx_);
    return current_;
  }

  std::optional<rpc::gateway> await(std::chrono::nanoseconds timeout) const {
    std::unique_lock<std::mutex> lock(mtx_);
    changed_.wait_for(lock, timeout, [this] { return current_.has_value(); });
    return current_;
  }

private:
  mutable std::mutex mtx_;
  mutable std::condition_variable changed_;
  std::optional<rpc::gateway> current_;
};

minicluster::minicluster(caf::actor_system& sys, minicluster_config config,
                         trace::trace_recorder* recorder)
  : sys_(sys),
    config_(std::move(config)),
    recorder_(recorder),
    ha_(config_.seed),
    follower_(std::make_unique<dispatcher_follower>()) {}

minicluster::~minicluster() {
  shutdown();
}

rpc::endpoint_context minicluster::context(std::string endpoint_id) const {
  return rpc::endpoint_context{std::move(endpoint_id), recorder_, config_.rpc};
}

void minicluster::start() {
  if (running_)
    return;
  running_ = true;
  dispatcher_retrieval_ = ha_.dispatcher_retrieval();
  dispatcher_retrieval_->start(*follower_);

  resource_manager::resource_manager_config rm_config;
  rm_config.heartbeat = config_.heartbeat;
  rm_config.slot_request_timeout = config_.slot_request_timeout;
  rm_config.task_manager_timeout = config_.task_manager_timeout;
  resource_manager_election_ = ha_.resource_manager_election();
  resource_manager_ = sys_.spawn<resource_manager::resource_manager>(
    context(resource_manager::endpoint_name), rm_config,
    resource_manager::resource_manager_services{resource_manager_election_.get(), &directory_});
  directory_.put(resource_manager::endpoint_name, resource_manager_);

  for (int i = 0; i < config_.number_of_task_managers; ++i)
    add_task_manager();

  dispatcher::dispatcher_config d_config;
  d_config.job_master.heartbeat = config_.heartbeat;
  d_config.job_master.registration = config_.registration;
  d_config.job_master.slot_request_timeout = config_.slot_request_timeout;
  d_config.job_master.slot_idle_timeout = config_.slot_idle_timeout;
  d_config.job_master.configuration = config_.configuration;
  dispatcher::dispatcher_services d_services;
  d_services.ha = &ha_;
  d_services.directory = &directory_;
  d_services.now_ms = [] { return trace::system_now_us() / 1000; };
  dispatcher_ = sys_.spawn<dispatcher::dispatcher>(context(dispatcher::endpoint_name), d_config,
                                                   std::move(d_services));
  directory_.put(dispatcher::endpoint_name, dispatcher_);
}

caf::actor minicluster::add_task_manager() {
  auto index = task_managers_.size() + 1;
  task_executor::task_executor_config te_config;
  te_config.resource_id =
    std::string(task_executor::endpoint_prefix) + "tm-" + std::to_string(index);
  te_config.host = "localhost";
  te_config.data_port = 0;
  te_config.number_of_slots = config_.number_of_slots_per_task_manager;
  te_config.heartbeat = config_.heartbeat;
  te_config.registration = config_.registration;
  te_config.detached_tasks = config_.detached_tasks;
  task_executor::task_executor_services te_services;
  te_services.ha = &ha_;
  te_services.directory = &directory_;
  te_services.metrics = config_.metrics;
  te_services.invokables = config_.invokables
    ? config_.invokables
    : task_executor::make_invokable_factory<task_executor::noop_invokable>();
  if (config_.task_manager) {
    auto own = config_.task_manager(static_cast<int>(index));
    te_config.host = own.host;
    te_config.data_port = own.data_port;
    if (own.invokables)
      te_services.invokables = std::move(own.invokables);
    te_services.holds_partitions = std::move(own.holds_partitions);
    te_services.release_job_partitions = std::move(own.release_job_partitions);
    te_services.release_partitions = std::move(own.release_partitions);
  }
  auto endpoint_id = te_config.resource_id;
  auto te = sys_.spawn<task_executor::task_executor>(context(endpoint_id), te_config,
                                                     std::move(te_services));
  directory_.put(endpoint_id, te);
  task_managers_.push_back(te);
  return te;
}

std::optional<rpc::gateway> minicluster::dispatcher_gateway() const {
  return follower_->current();
}

std::optional<rpc::gateway> minicluster::await_dispatcher(std::chrono::nanoseconds timeout) const {
  return follower_->await(timeout);
}

expected<dispatcher::job_result> minicluster::execute(const graph::job_graph& job,
                                                      std::chrono::nanoseconds timeout) {
  auto gw = await_dispatcher(std::chrono::seconds(10));
  if (!gw)
    return make_error(errc::unreachable, "the MiniCluster's Dispatcher did not become leader");
  caf::scoped_actor self{sys_, true};
  rpc::client_identity who{"minicluster_client", recorder_, config_.rpc.ask_timeout};
  auto submitted =
    gw->ask_blocking<dispatcher::submit_job>(*self, who, dispatcher::submit_job_request{job});
  if (!submitted)
    return submitted.error();
  who.ask_timeout = timeout;
  return gw->ask_blocking<dispatcher::request_job_result>(*self, who,
                                                          dispatcher::job_id_request{job.job_id});
}

void minicluster::shutdown() {
  if (!running_)
    return;
  running_ = false;
  // TaskExecutors first, as Flink's MiniCluster does, then the Dispatcher and the RM.
  std::vector<caf::actor> all = task_managers_;
  if (dispatcher_)
    all.push_back(dispatcher_);
  if (resource_manager_)
    all.push_back(resource_manager_);
  if (config_.blocking_shutdown) {
    // The endpoints use the HA services and the directory owned here until their on_exit ran.
    caf::scoped_actor self{sys_, true};
    for (auto& a : all) {
      self->monitor(a);
      self->send_exit(a, caf::exit_reason::user_shutdown);
    }
    for (std::size_t i = 0; i < all.size(); ++i)
      self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(10)) >> [] {});
  } else {
    for (auto& a : all)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  task_managers_.clear();
  dispatcher_ = {};
  resource_manager_ = {};
  if (dispatcher_retrieval_)
    dispatcher_retrieval_->stop();
}

} // namespace flint::minicluster
