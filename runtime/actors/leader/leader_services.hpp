#pragma once
/// Leader election and retrieval (Flink's LeaderElectionService / LeaderRetrievalService). The
/// leader session id a contender is granted becomes its fencing token; retrieval listeners learn
/// the leader's address together with that id, so their gateways carry the right token.
///
/// Callbacks may arrive on any thread: an endpoint forwards them into its main thread with
/// `run_async` before touching its state.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "runtime/actors/envelope/fencing_token.hpp"

namespace flint::leader {

/// Where a leader can be reached: a handle in this process, or host/port/name across processes.
struct leader_address {
  std::string endpoint_id;
  caf::actor handle; ///< set when the leader lives in this actor system
  std::string host; ///< set for a remote leader (standalone mode)
  std::uint16_t port = 0;

  bool empty() const noexcept { return endpoint_id.empty() && !handle && host.empty(); }
};

/// A component that wants to lead (Flink's LeaderContender).
class leader_contender {
public:
  virtual ~leader_contender() = default;
  /// This contender leads under `session_id` until revoked; confirm through the service.
  virtual void grant_leadership(const rpc::fencing_token& session_id) = 0;
  virtual void revoke_leadership() = 0;
  virtual std::string description() const = 0;
};

/// A component that follows the leader (Flink's LeaderRetrievalListener).
class leader_retrieval_listener {
public:
  virtual ~leader_retrieval_listener() = default;
  /// A new leader, or none (empty address, nil id) while leadership is vacant.
  virtual void notify_leader_address(const leader_address& address,
                                     const rpc::fencing_token& session_id) = 0;
};

class leader_election_service {
public:
  virtual ~leader_election_service() = default;
  virtual void start(leader_contender& contender) = 0;
  virtual void stop() = 0;
  /// The contender accepts `session_id` and publishes where it can be reached.
  virtual void confirm_leadership(const rpc::fencing_token& session_id,
                                  const leader_address& address) = 0;
  virtual bool has_leadership(const rpc::fencing_token& session_id) const = 0;
};

class leader_retrieval_service {
public:
  virtual ~leader_retrieval_service() = default;
  virtual void start(leader_retrieval_listener& listener) = 0;
  virtual void stop() = 0;
};

} // namespace flint::leader
