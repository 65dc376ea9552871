#include "runtime/actors/leader/standalone_ha_services.hpp"

#include <algorithm>
#include <condition_variable>
#include <thread>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/attachable.hpp>
#include <caf/error.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/logging.hpp"

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

/// Resolves a leader in another process (a TaskManager following the JobManager process).
class remote_retrieval final : public leader_retrieval_service {
public:
  remote_retrieval(caf::actor_system& sys, standalone_ha_config config, std::string endpoint_id)
    : sys_(sys),
      config_(std::move(config)),
      endpoint_id_(std::move(endpoint_id)),
      shared_(std::make_shared<shared>()) {}
  ~remote_retrieval() override { stop(); }

  void start(leader_retrieval_listener& listener) override {
    if (thread_.joinable())
      return;
    listener_ = &listener;
    thread_ = std::thread([this] { run(); });
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> guard(shared_->mtx);
      shared_->stopping = true;
    }
    shared_->cv.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

private:
  /// What the thread and the handle's death callback share (the callback may outlive `this`).
  struct shared {
    std::mutex mtx;
    std::condition_variable cv;
    bool stopping = false;
    /// Bumped each time a resolved handle dies; the callback names the generation it watches.
    std::uint64_t lost = 0;
  };

  /// Waits up to `d`; false when stopping.
  bool pause(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(shared_->mtx);
    shared_->cv.wait_for(lock, d, [this] { return shared_->stopping; });
    return !shared_->stopping;
  }

  void run() {
    auto where = config_.jobmanager_host + ":" + std::to_string(config_.jobmanager_port);
    std::string last_failure;
    for (;;) {
      {
        std::lock_guard<std::mutex> guard(shared_->mtx);
        if (shared_->stopping)
          return;
      }
      auto found = rpc::connect_endpoint(sys_, config_.jobmanager_host, config_.jobmanager_port,
                                         endpoint_id_, config_.lookup_timeout);
      if (!found) {
        // Logged once per distinct reason: a TaskManager started before its JobManager retries
        // quietly (Flink: "Could not resolve ResourceManager address ..., retrying in ...").
        if (found.error().message != last_failure) {
          last_failure = found.error().message;
          log_->debug("Could not resolve {} at {}: {}; retrying in {} ms.", endpoint_id_, where,
                      last_failure, config_.retry_interval.count());
        }
        if (!pause(config_.retry_interval))
          return;
        continue;
      }
      last_failure.clear();
      caf::actor handle = std::move(*found);
      std::uint64_t generation;
      {
        std::lock_guard<std::mutex> guard(shared_->mtx);
        generation = shared_->lost;
      }
      // Called when the proxy dies: the remote actor ended or its node became unreachable.
      std::weak_ptr<shared> weak = shared_;
      handle->attach_functor([weak, generation](const caf::error&) {
        if (auto s = weak.lock()) {
          {
            std::lock_guard<std::mutex> guard(s->mtx);
            if (s->lost == generation)
              ++s->lost;
          }
          s->cv.notify_all();
        }
      });
      log_->debug("Resolved {} at {}.", endpoint_id_, where);
      listener_->notify_leader_address(
        leader_address{endpoint_id_, handle, config_.jobmanager_host, config_.jobmanager_port},
        standalone_leader_id());
      {
        std::unique_lock<std::mutex> lock(shared_->mtx);
        shared_->cv.wait(lock, [&] { return shared_->stopping || shared_->lost != generation; });
        if (shared_->stopping)
          return;
      }
      log_->debug("Lost {} at {}; resolving it again.", endpoint_id_, where);
      handle = {};
      listener_->notify_leader_address({}, {});
      if (!pause(config_.retry_interval))
        return;
    }
  }

  caf::actor_system& sys_;
  standalone_ha_config config_;
  std::string endpoint_id_;
  std::shared_ptr<shared> shared_;
  std::shared_ptr<spdlog::logger> log_ = make_endpoint_logger("standalone_ha_services");
  leader_retrieval_listener* listener_ = nullptr;
  std::thread thread_;
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
    return std::make_unique<remote_retrieval>(*sys_, config_, endpoint_id);
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
