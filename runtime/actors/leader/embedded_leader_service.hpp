#pragma once
/// Leader election inside one process (Flink's EmbeddedLeaderService, used by the MiniCluster):
/// the first contender leads under a fresh random session id; when leadership is revoked the next
/// grant carries a new id, so calls fenced with the old one fail.

#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "runtime/actors/leader/leader_services.hpp"

namespace flint::leader {

class embedded_leader_service {
public:
  explicit embedded_leader_service(std::uint64_t seed);

  /// An election service for one contender of this leadership.
  std::unique_ptr<leader_election_service> create_election_service();
  /// A retrieval service following this leadership.
  std::unique_ptr<leader_retrieval_service> create_retrieval_service();

  /// Takes leadership from the current leader and grants it anew (same or next contender) under
  /// a new session id, as a lost ZooKeeper session would. For tests and failover drills.
  void revoke_and_regrant();

  /// The confirmed leader's session id (nil while none is confirmed).
  rpc::fencing_token current_session_id() const;

private:
  class election;
  class retrieval;
  friend class election;
  friend class retrieval;

  void add_contender(leader_contender* c);
  void remove_contender(leader_contender* c);
  void confirm(const rpc::fencing_token& id, const leader_address& address);
  bool is_current(const rpc::fencing_token& id) const;
  void add_listener(leader_retrieval_listener* l);
  void remove_listener(leader_retrieval_listener* l);
  /// Grants to the first contender if leadership is vacant. Returns what to call unlocked.
  leader_contender* grant_if_vacant_locked(rpc::fencing_token& granted);

  mutable std::mutex mtx_;
  /// Held while callbacks run (outside mtx_, so they may call back in): taken before the list of
  /// whom to notify is read, and by remove_listener/remove_contender after the removal, so once
  /// those return no callback to the removed object is under way or still to come. Recursive: a
  /// contender may confirm from inside grant_leadership.
  std::recursive_mutex notify_mtx_;
  std::mt19937_64 rng_;
  std::vector<leader_contender*> contenders_;
  std::vector<leader_retrieval_listener*> listeners_;
  leader_contender* leader_ = nullptr;
  rpc::fencing_token granted_id_;
  rpc::fencing_token confirmed_id_;
  leader_address confirmed_address_;
};

/// Standalone mode (Flink's StandaloneLeaderElectionService / StandaloneLeaderRetrievalService):
/// the leader is fixed by configuration (`jobmanager.rpc.address`), under a fixed session id.
class standalone_leader_election_service : public leader_election_service {
public:
  void start(leader_contender& contender) override;
  void stop() override;
  void confirm_leadership(const rpc::fencing_token&, const leader_address&) override {}
  bool has_leadership(const rpc::fencing_token& session_id) const override;

private:
  leader_contender* contender_ = nullptr;
};

class standalone_leader_retrieval_service : public leader_retrieval_service {
public:
  explicit standalone_leader_retrieval_service(leader_address address);
  void start(leader_retrieval_listener& listener) override;
  void stop() override {}

private:
  leader_address address_;
};

/// The session id every standalone leader uses: fixed, so processes agree without an election.
/// (Flink uses the all-zero UUID; Flint reserves nil for "no token", hence ...0001.) Clients of
/// a standalone cluster (the `flint` CLI) use it as the DispatcherId.
constexpr rpc::fencing_token standalone_leader_id() noexcept {
  return rpc::fencing_token{0, 1};
}

} // namespace flint::leader
