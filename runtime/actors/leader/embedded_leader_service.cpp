#include "runtime/actors/leader/embedded_leader_service.hpp"

#include <algorithm>
#include <utility>

namespace flint::leader {

class embedded_leader_service::election : public leader_election_service {
public:
  explicit election(embedded_leader_service& parent) : parent_(parent) {}
  ~election() override { stop(); }

  void start(leader_contender& contender) override {
    contender_ = &contender;
    parent_.add_contender(contender_);
  }
  void stop() override {
    if (contender_ != nullptr)
      parent_.remove_contender(std::exchange(contender_, nullptr));
  }
  void confirm_leadership(const rpc::fencing_token& id, const leader_address& address) override {
    parent_.confirm(id, address);
  }
  bool has_leadership(const rpc::fencing_token& id) const override {
    return parent_.is_current(id);
  }

private:
  embedded_leader_service& parent_;
  leader_contender* contender_ = nullptr;
};

class embedded_leader_service::retrieval : public leader_retrieval_service {
public:
  explicit retrieval(embedded_leader_service& parent) : parent_(parent) {}
  ~retrieval() override { stop(); }

  void start(leader_retrieval_listener& listener) override {
    listener_ = &listener;
    parent_.add_listener(listener_);
  }
  void stop() override {
    if (listener_ != nullptr)
      parent_.remove_listener(std::exchange(listener_, nullptr));
  }

private:
  embedded_leader_service& parent_;
  leader_retrieval_listener* listener_ = nullptr;
};

embedded_leader_service::embedded_leader_service(std::uint64_t seed) : rng_(seed) {}

std::unique_ptr<leader_election_service> embedded_leader_service::create_election_service() {
  return std::make_unique<election>(*this);
}

std::unique_ptr<leader_retrieval_service> embedded_leader_service::create_retrieval_service() {
  return std::make_unique<retrieval>(*this);
}

leader_contender* embedded_leader_service::grant_if_vacant_locked(rpc::fencing_token& granted) {
  if (leader_ != nullptr || contenders_.empty())
    return nullptr;
  leader_ = contenders_.front();
  granted_id_ = rpc::fencing_token::generate(rng_);
  granted = granted_id_;
  return leader_;
}

void embedded_leader_service::add_contender(leader_contender* c) {
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
  rpc::fencing_token granted;
  leader_contender* to_grant = nullptr;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    contenders_.push_back(c);
    to_grant = grant_if_vacant_locked(granted);
  }
  if (to_grant != nullptr)
    to_grant->grant_leadership(granted);
}

void embedded_leader_service::remove_contender(leader_contender* c) {
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
  rpc::fencing_token granted;
  leader_contender* to_grant = nullptr;
  std::vector<leader_retrieval_listener*> to_notify;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    contenders_.erase(std::remove(contenders_.begin(), contenders_.end(), c), contenders_.end());
    if (leader_ != c)
      return;
    leader_ = nullptr;
    granted_id_ = {};
    confirmed_id_ = {};
    confirmed_address_ = {};
    to_notify = listeners_;
    to_grant = grant_if_vacant_locked(granted);
  }
  for (auto* l : to_notify)
    l->notify_leader_address({}, {});
  if (to_grant != nullptr)
    to_grant->grant_leadership(granted);
}

void embedded_leader_service::confirm(const rpc::fencing_token& id, const leader_address& address) {
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
  std::vector<leader_retrieval_listener*> to_notify;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    // A confirmation for a session that was revoked meanwhile is stale: ignore it.
    if (leader_ == nullptr || id != granted_id_)
      return;
    confirmed_id_ = id;
    confirmed_address_ = address;
    to_notify = listeners_;
  }
  for (auto* l : to_notify)
    l->notify_leader_address(address, id);
}

bool embedded_leader_service::is_current(const rpc::fencing_token& id) const {
  std::lock_guard<std::mutex> guard(mtx_);
  return leader_ != nullptr && id == granted_id_;
}

void embedded_leader_service::add_listener(leader_retrieval_listener* l) {
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
  leader_address address;
  rpc::fencing_token id;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    listeners_.push_back(l);
    if (confirmed_id_.is_nil())
      return;
    address = confirmed_address_;
    id = confirmed_id_;
  }
  l->notify_leader_address(address, id);
}

void embedded_leader_service::remove_listener(leader_retrieval_listener* l) {
  {
    std::lock_guard<std::mutex> guard(mtx_);
    listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), l), listeners_.end());
  }
  // Waits for a notification already under way, which may still include `l`.
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
}

void embedded_leader_service::revoke_and_regrant() {
  std::lock_guard<std::recursive_mutex> notifying(notify_mtx_);
  leader_contender* revoked = nullptr;
  leader_contender* to_grant = nullptr;
  rpc::fencing_token granted;
  std::vector<leader_retrieval_listener*> to_notify;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    revoked = std::exchange(leader_, nullptr);
    granted_id_ = {};
    confirmed_id_ = {};
    confirmed_address_ = {};
    to_notify = listeners_;
    to_grant = grant_if_vacant_locked(granted);
  }
  if (revoked != nullptr)
    revoked->revoke_leadership();
  for (auto* l : to_notify)
    l->notify_leader_address({}, {});
  if (to_grant != nullptr)
    to_grant->grant_leadership(granted);
}

rpc::fencing_token embedded_leader_service::current_session_id() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return confirmed_id_;
}

// -- standalone -----------------------------------------------------------------------------------

void standalone_leader_election_service::start(leader_contender& contender) {
  contender_ = &contender;
  contender_->grant_leadership(standalone_leader_id());
}

void standalone_leader_election_service::stop() {
  if (contender_ != nullptr)
    std::exchange(contender_, nullptr)->revoke_leadership();
}

bool standalone_leader_election_service::has_leadership(const rpc::fencing_token& id) const {
  return contender_ != nullptr && id == standalone_leader_id();
}

standalone_leader_retrieval_service::standalone_leader_retrieval_service(leader_address address)
  : address_(std::move(address)) {}

void standalone_leader_retrieval_service::start(leader_retrieval_listener& listener) {
  listener.notify_leader_address(address_, standalone_leader_id());
}

} // namespace flint::leader
