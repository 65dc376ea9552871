#include "runtime/actors/leader/standalone_ha_services.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "runtime/actors/leader/resolving_leader_retrieval.hpp"

namespace flint::leader {

// The endpoint ids of contract B (rpc_service.hpp); spelled here so flint_rpc needs no endpoint's
// protocol library.
constexpr const char* resource_manager_id = "resource_manager";
constexpr const char* dispatcher_id = "dispatcher";
constexpr const char* job_master_prefix = "job_master/";

// -- local leadership ------------------------------------------------------------------------------

/// One leadership in this process: its contender and confirmed address, and who follows it.
struct standalone_ha_services::slot {
  std::mutex mtx;
  leader_contender* contender = nullptr;
  leader_address confirmed;
  std::vector<leader_retrieval_listener*> listeners;

  void notify_all(const leader_address& address, const rpc::fencing_token& id) {
    std::vector<leader_retrieval_listener*> to_notify;
    {
      std::lock_guard<std::mutex> guard(mtx);
      to_notify = listeners;
    }
    for (auto* l : to_notify)
      l->notify_leader_address(address, id);
  }
};

namespace {

using slot_ptr = std::shared_ptr<standalone_ha_services::slot>;

/// Flink's StandaloneLeaderElectionService: the contender leads at once under the fixed id.
class fixed_election final : public leader_election_service {
public:
  explicit fixed_election(slot_ptr s) : slot_(std::move(s)) {}
  ~fixed_election() override { stop(); }

  void start(leader_contender& contender) override {
    {
      std::lock_guard<std::mutex> guard(slot_->mtx);
      slot_->contender = &contender;
    }
    contender.grant_leadership(standalone_leader_id());
  }

  void stop() override {
    leader_contender* c = nullptr;
    bool had_address = false;
    {
      std::lock_guard<std::mutex> guard(slot_->mtx);
      if (slot_->contender == nullptr)
        return;
      c = std::exchange(slot_->contender, nullptr);
      had_address = !slot_->confirmed.empty();
      slot_->confirmed = {};
    }
    c->revoke_leadership();
    if (had_address)
      slot_->notify_all({}, {});
  }

  void confirm_leadership(const rpc::fencing_token& id, const leader_address& address) override {
    {
      std::lock_guard<std::mutex> guard(slot_->mtx);
      if (slot_->contender == nullptr || id != standalone_leader_id())
        return; // stale or foreign session
      slot_->confirmed = address;
    }
    slot_->notify_all(address, id);
  }

  bool has_leadership(const rpc::fencing_token& id) const override {
    std::lock_guard<std::mutex> guard(slot_->mtx);
    return slot_->contender != nullptr && id == standalone_leader_id();
  }

private:
  slot_ptr slot_;
};

/// Follows a leader elected in this process (the JobManager process).
class local_retrieval final : public leader_retrieval_service {
public:
  explicit local_retrieval(slot_ptr s) : slot_(std::move(s)) {}
  ~local_retrieval() override { stop(); }

  void start(leader_retrieval_listener& listener) override {
    leader_address address;
    {
      std::lock_guard<std::mutex> guard(slot_->mtx);
      listener_ = &listener;
      slot_->listeners.push_back(listener_);
      address = slot_->confirmed;
    }
    if (!address.empty())
      listener.notify_leader_address(address, standalone_leader_id());
  }

  void stop() override {
    std::lock_guard<std::mutex> guard(slot_->mtx);
    if (listener_ == nullptr)
      return;
    auto& ls = slot_->listeners;
    ls.erase(std::remove(ls.begin(), ls.end(), listener_), ls.end());
    listener_ = nullptr;
  }

private:
  slot_ptr slot_;
  leader_retrieval_listener* listener_ = nullptr;
};

} // namespace

// -- services --------------------------------------------------------------------------------------

standalone_ha_services::standalone_ha_services() = default;

standalone_ha_services::standalone_ha_services(caf::actor_system& sys, standalone_ha_config config)
  : sys_(&sys),
    config_(std::move(config)) {}

standalone_ha_services::~standalone_ha_services() = default;

std::shared_ptr<standalone_ha_services::slot> standalone_ha_services::slot_of(
  const std::string& endpoint_id) {
  std::lock_guard<std::mutex> guard(mtx_);
  auto& s = slots_[endpoint_id];
  if (!s)
    s = std::make_shared<slot>();
  // Slots of ended jobs that nobody holds any more are dropped.
  std::erase_if(
    slots_, [&](const auto& kv) { return kv.first != endpoint_id && kv.second.use_count() == 1; });
  return s;
}

std::unique_ptr<leader_election_service> standalone_ha_services::election(
  const std::string& endpoint_id) {
  return std::make_unique<fixed_election>(slot_of(endpoint_id));
}

std::unique_ptr<leader_retrieval_service> standalone_ha_services::retrieval(
  const std::string& endpoint_id) {
  if (sys_ != nullptr)
    return std::make_unique<resolving_leader_retrieval>(
      *sys_, leader_address{endpoint_id, {}, config_.jobmanager_host, config_.jobmanager_port},
      standalone_leader_id(),
      resolving_retrieval_config{config_.retry_interval, config_.lookup_timeout, {}, 0, nullptr});
  return std::make_unique<local_retrieval>(slot_of(endpoint_id));
}

std::unique_ptr<leader_election_service> standalone_ha_services::resource_manager_election() {
  return election(resource_manager_id);
}
std::unique_ptr<leader_retrieval_service> standalone_ha_services::resource_manager_retrieval() {
  return retrieval(resource_manager_id);
}
std::unique_ptr<leader_election_service> standalone_ha_services::dispatcher_election() {
  return election(dispatcher_id);
}
std::unique_ptr<leader_retrieval_service> standalone_ha_services::dispatcher_retrieval() {
  return retrieval(dispatcher_id);
}
std::unique_ptr<leader_election_service> standalone_ha_services::job_master_election(
  const graph::job_id& job) {
  return election(std::string(job_master_prefix) + job.to_string());
}
std::unique_ptr<leader_retrieval_service> standalone_ha_services::job_master_retrieval(
  const graph::job_id& job) {
  return retrieval(std::string(job_master_prefix) + job.to_string());
}

} // namespace flint::leader
