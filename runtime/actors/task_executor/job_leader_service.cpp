#include "runtime/actors/task_executor/job_leader_service.hpp"

#include "runtime/actors/rpc/gateway.hpp"

namespace flint::task_executor {

struct job_leader_service::job_state : leader::leader_retrieval_listener,
                                       std::enable_shared_from_this<job_state> {
  job_state(job_leader_service& parent, graph::job_id job) : parent(parent), job(job) {}

  // Any thread: forwarded to the owner's main thread; ignored there if the job was removed.
  void notify_leader_address(const leader::leader_address& address,
                             const rpc::fencing_token& id) override {
    parent.owner_.run_async([weak = weak_from_this(), address, id] {
      if (auto self = weak.lock())
        self->parent.on_leader(self, address, id);
    });
  }

  job_leader_service& parent;
  graph::job_id job;
  std::unique_ptr<leader::leader_retrieval_service> retrieval;
  leader::leader_address address;
  cluster::job_master_id leader_id;
  std::unique_ptr<
    registration::retrying_registration<job_master::task_manager_registration_success>>
    registration;
  bool registered = false;
};

job_leader_service::job_leader_service(rpc::rpc_endpoint& owner, leader::ha_services& ha,
                                       registration::retrying_registration_config config,
                                       job_master::register_task_manager_request registration,
                                       job_leader_listener& listener, lookup_fn lookup)
  : owner_(owner),
    ha_(ha),
    config_(config),
    registration_(std::move(registration)),
    listener_(listener),
    lookup_(std::move(lookup)) {}

job_leader_service::~job_leader_service() {
  stop();
}

void job_leader_service::add_job(const graph::job_id& job) {
  if (jobs_.contains(job))
    return;
  auto s = std::make_shared<job_state>(*this, job);
  jobs_[job] = s;
  s->retrieval = ha_.job_master_retrieval(job);
  // The embedded retrieval may call back at once; the callback goes through the mailbox.
  s->retrieval->start(*s);
}

void job_leader_service::remove_job(const graph::job_id& job) {
  auto i = jobs_.find(job);
  if (i == jobs_.end())
    return;
  auto s = i->second;
  jobs_.erase(i);
  if (s->registration)
    s->registration->cancel();
  if (s->retrieval)
    s->retrieval->stop();
}

void job_leader_service::reconnect(const graph::job_id& job) {
  auto i = jobs_.find(job);
  if (i == jobs_.end() || i->second->leader_id.is_nil())
    return;
  start_registration(i->second);
}

bool job_leader_service::contains_job(const graph::job_id& job) const {
  return jobs_.contains(job);
}

cluster::job_master_id job_leader_service::leader_id_of(const graph::job_id& job) const {
  auto i = jobs_.find(job);
  return i == jobs_.end() ? cluster::job_master_id{} : i->second->leader_id;
}

void job_leader_service::stop() {
  auto jobs = jobs_;
  for (auto& [job, s] : jobs)
    remove_job(job);
}

void job_leader_service::on_leader(const std::shared_ptr<job_state>& s,
                                   const leader::leader_address& address,
                                   const cluster::job_master_id& id) {
  if (!jobs_.contains(s->job) || jobs_.at(s->job) != s)
    return;
  if (id == s->leader_id && !id.is_nil())
    return; // the same leader again
  auto old = s->leader_id;
  bool was_connected_or_trying = !old.is_nil();
  if (s->registration)
    s->registration->cancel();
  s->registration.reset();
  s->registered = false;
  s->leader_id = id;
  s->address = address;
  if (was_connected_or_trying)
    listener_.job_manager_lost_leadership(s->job, old);
  if (id.is_nil() || address.empty())
    return;
  start_registration(s);
}

void job_leader_service::start_registration(const std::shared_ptr<job_state>& s) {
  if (s->registration)
    s->registration->cancel();
  s->registered = false;
  auto address = s->address;
  auto id = s->leader_id;
  auto handle = address.handle;
  if (!handle && lookup_)
    handle = lookup_(address.endpoint_id).value_or(caf::actor{});
  using success_type = job_master::task_manager_registration_success;
  using registration_type = registration::retrying_registration<success_type>;
  // Flink: "Try to register at job manager {} with leader id {}."
  s->registration = std::make_unique<registration_type>(
    owner_, "JobManager " + address.endpoint_id, config_,
    [this, handle, address, id](std::chrono::nanoseconds timeout, registration_type::done_fn done) {
      if (!handle) {
        done(make_error(errc::unreachable, "no handle for JobMaster " + address.endpoint_id));
        return;
      }
      rpc::gateway(handle, address.endpoint_id, id)
        .ask<job_master::register_task_manager>(owner_, registration_, std::move(done), timeout);
    },
    [this, weak = std::weak_ptr<job_state>(s), address, id](success_type success) {
      auto self = weak.lock();
      if (!self || self->leader_id != id)
        return;
      // Flink: "Successful registration at job manager {} for job {}."
      self->registered = true;
      listener_.job_manager_gained_leadership(self->job, id, address, success);
    });
  s->registration->start();
}

} // namespace flint::task_executor
