#include "runtime/actors/leader/resolving_leader_retrieval.hpp"

#include <condition_variable>
#include <mutex>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/attachable.hpp>
#include <caf/error.hpp>
#include <spdlog/logger.h>

#include "runtime/actors/rpc/endpoint_directory.hpp"
#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/common/logging.hpp"

namespace flint::leader {

namespace {

const std::shared_ptr<spdlog::logger>& logger() {
  static const auto log = make_endpoint_logger("leader_retrieval");
  return log;
}

bool same_place(const leader_address& a, const leader_address& b) {
  return a.endpoint_id == b.endpoint_id && a.host == b.host && a.port == b.port;
}

} // namespace

/// What the resolving thread, the source's notifications and a handle's death callback share
/// (the callback may outlive the service).
struct resolving_leader_retrieval::shared {
  std::mutex mtx;
  std::condition_variable cv;
  bool stopping = false;
  /// The address to resolve (no handle) and its leader id; bumped generation on each change.
  leader_address target;
  rpc::fencing_token session_id;
  std::uint64_t generation = 0;
  /// Bumped for each resolved handle and when it dies; the callback names the value it watches.
  std::uint64_t lost = 0;

  void set_target(leader_address address, const rpc::fencing_token& id) {
    address.handle = {};
    {
      std::lock_guard<std::mutex> guard(mtx);
      if (same_place(address, target) && id == session_id)
        return;
      target = std::move(address);
      session_id = id;
      ++generation;
    }
    cv.notify_all();
  }
};

namespace {

/// Receives the source's reports (on the source's thread) and hands them to the resolver.
class target_listener final : public leader_retrieval_listener {
public:
  explicit target_listener(std::shared_ptr<resolving_leader_retrieval::shared> s)
    : shared_(std::move(s)) {}
  void notify_leader_address(const leader_address& address,
                             const rpc::fencing_token& session_id) override {
    shared_->set_target(address, session_id);
  }

private:
  std::shared_ptr<resolving_leader_retrieval::shared> shared_;
};

} // namespace

resolving_leader_retrieval::resolving_leader_retrieval(caf::actor_system& sys,
                                                       leader_address target,
                                                       rpc::fencing_token session_id,
                                                       resolving_retrieval_config config)
  : sys_(sys),
    config_(std::move(config)),
    shared_(std::make_shared<shared>()) {
  shared_->set_target(std::move(target), session_id);
}

resolving_leader_retrieval::resolving_leader_retrieval(
  caf::actor_system& sys, std::unique_ptr<leader_retrieval_service> source,
  resolving_retrieval_config config)
  : sys_(sys),
    source_(std::move(source)),
    config_(std::move(config)),
    shared_(std::make_shared<shared>()) {
  source_listener_ = std::make_unique<target_listener>(shared_);
}

resolving_leader_retrieval::~resolving_leader_retrieval() {
  stop();
}

void resolving_leader_retrieval::start(leader_retrieval_listener& listener) {
  if (thread_.joinable() || listener_ != nullptr)
    return;
  listener_ = &listener;
  thread_ = std::thread([this] { run(); });
  if (source_)
    source_->start(*source_listener_);
}

void resolving_leader_retrieval::stop() {
  // The source first: it notifies no more once stopped.
  if (source_)
    source_->stop();
  {
    std::lock_guard<std::mutex> guard(shared_->mtx);
    shared_->stopping = true;
  }
  shared_->cv.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void resolving_leader_retrieval::run() {
  auto& s = *shared_;
  std::uint64_t handled = 0;
  bool told_leader = false;
  std::string last_failure;
  // Waits up to the retry interval; false when stopping or the target changed meanwhile.
  auto pause = [&](std::uint64_t generation) {
    std::unique_lock<std::mutex> lock(s.mtx);
    s.cv.wait_for(lock, config_.retry_interval,
                  [&] { return s.stopping || s.generation != generation; });
    return !s.stopping && s.generation == generation;
  };
  auto tell_no_leader = [&] {
    if (told_leader)
      listener_->notify_leader_address({}, {});
    told_leader = false;
  };
  for (;;) {
    leader_address target;
    rpc::fencing_token id;
    std::uint64_t generation;
    {
      std::unique_lock<std::mutex> lock(s.mtx);
      s.cv.wait(lock, [&] { return s.stopping || s.generation != handled; });
      if (s.stopping)
        return;
      target = s.target;
      id = s.session_id;
      generation = handled = s.generation;
    }
    if (target.empty() || target.endpoint_id.empty()) {
      tell_no_leader();
      continue;
    }
    auto where = target.host + ":" + std::to_string(target.port);
    for (;;) {
      expected<caf::actor> found = make_error(errc::not_found, "not looked up");
      if (config_.directory != nullptr && target.host == config_.local_host
          && target.port == config_.local_port) {
        if (auto local = config_.directory->lookup(target.endpoint_id); local && *local)
          found = *local;
        else
          found = make_error(errc::not_found, target.endpoint_id + " is not in this process");
      } else {
        found = rpc::connect_endpoint(sys_, target.host, target.port, target.endpoint_id,
                                      config_.lookup_timeout);
      }
      if (!found) {
        // Logged once per distinct reason: a follower started before its leader retries quietly
        // (Flink: "Could not resolve ResourceManager address ..., retrying in ...").
        if (found.error().message != last_failure) {
          last_failure = found.error().message;
          logger()->debug("Could not resolve {} at {}: {}; retrying in {} ms.", target.endpoint_id,
                          where, last_failure, config_.retry_interval.count());
        }
        if (!pause(generation))
          break;
        continue;
      }
      last_failure.clear();
      caf::actor handle = std::move(*found);
      std::uint64_t lost;
      {
        // A number of this handle's own: the death of a handle resolved before (a deposed
        // leader's, stopping long after it was replaced) must not count as this one's.
        std::lock_guard<std::mutex> guard(s.mtx);
        lost = ++s.lost;
      }
      // Called when the handle dies: the remote actor ended or its node became unreachable.
      std::weak_ptr<shared> weak = shared_;
      handle->attach_functor([weak, lost](const caf::error&) {
        if (auto self = weak.lock()) {
          {
            std::lock_guard<std::mutex> guard(self->mtx);
            if (self->lost == lost)
              ++self->lost;
          }
          self->cv.notify_all();
        }
      });
      logger()->debug("Resolved {} at {} (leader id {}).", target.endpoint_id, where,
                      id.to_string());
      leader_address resolved = target;
      resolved.handle = handle;
      listener_->notify_leader_address(resolved, id);
      told_leader = true;
      bool replaced;
      {
        std::unique_lock<std::mutex> lock(s.mtx);
        s.cv.wait(lock, [&] { return s.stopping || s.lost != lost || s.generation != generation; });
        if (s.stopping)
          return;
        replaced = s.generation != generation;
      }
      handle = {};
      if (replaced)
        break;
      logger()->debug("Lost {} at {}; resolving it again.", target.endpoint_id, where);
      tell_no_leader();
      if (!pause(generation))
        break;
    }
  }
}

} // namespace flint::leader
