#pragma once
/// Leader election and retrieval through ZooKeeper (Flink's LeaderLatch with
/// ZooKeeperLeaderElectionDriver, and ZooKeeperLeaderRetrievalDriver), for one component whose
/// nodes live under `component_path` (e.g. "/flink/<cluster-id>/leader/resource_manager"):
///
/// - `<component_path>/latch`: each contender creates an EPHEMERAL_SEQUENTIAL child there; the
///   lowest sequence number leads under a fresh random session id, the others watch their
///   predecessor. Leadership is revoked when the latch node disappears, the session expires, or
///   the client stays `connecting` longer than `suspended_grace` (the C client never declares
///   `expired` by itself while no server answers: Flink's SUSPENDED, then LOST). After such a
///   loss the contender contends again, with a new node, once the client is connected.
/// - `<component_path>/connection_info`: an ephemeral node the leader writes on
///   `confirm_leadership` (see encode_leader_address); retrievals watch and read it. The
///   in-process handle of a leader_address cannot travel: retrieved addresses carry
///   endpoint_id/host/port only.
///
/// Threads: each service runs one worker thread of its own, which does the ZooKeeper calls (they
/// cannot run on the client's completion thread) and calls the contender or listener. Callbacks
/// therefore arrive on that thread: endpoints forward into their main thread, as with every
/// leader service. `stop()` joins the worker, so no callback runs after it returns; never call
/// `stop()` (or destroy the service) from inside one of its callbacks. The client must stay open
/// while a service runs.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "runtime/actors/leader/leader_services.hpp"

namespace flint::ha {
class zookeeper_client;
} // namespace flint::ha

namespace flint::leader {

/// "endpoint_id\nhost\nport\nsession-id-hex" (32 hex digits: hi then lo).
std::string encode_leader_address(const leader_address& address,
                                  const rpc::fencing_token& session_id);

struct decoded_leader_address {
  leader_address address;
  rpc::fencing_token session_id;
};

/// The inverse of encode_leader_address; nullopt for a malformed text.
std::optional<decoded_leader_address> decode_leader_address(const std::string& text);

class zookeeper_leader_election_service : public leader_election_service {
public:
  zookeeper_leader_election_service(std::shared_ptr<ha::zookeeper_client> client,
                                    std::string component_path,
                                    std::chrono::milliseconds suspended_grace,
                                    std::shared_ptr<spdlog::logger> logger);
  /// stop().
  ~zookeeper_leader_election_service() override;

  /// Contends for leadership; `contender` must outlive stop(). Once per service.
  void start(leader_contender& contender) override;
  /// Stops contending: removes the latch node (and the connection info if this contender wrote
  /// it) without calling revoke_leadership. Idempotent.
  void stop() override;
  /// Publishes `address` if this contender still leads under `session_id`; ignored otherwise.
  void confirm_leadership(const rpc::fencing_token& session_id,
                          const leader_address& address) override;
  bool has_leadership(const rpc::fencing_token& session_id) const override;

private:
  struct state;
  std::shared_ptr<state> state_;
  std::thread worker_;
};

/// The election of one job's JobMaster (Flink's per-component leadership under the JobManager
/// process's leader latch, FLINK-24038): the Dispatcher runs a job's JobMaster only while it
/// leads, and stops it when it loses leadership, so the job needs no latch of its own — a latch
/// node left by a cut-off JobManager's session would block the next leader's JobMaster until
/// that session ended. `start` grants a fresh JobMasterId at once (on the caller's thread);
/// `confirm_leadership` publishes `<component_path>/connection_info`, replacing one a former
/// leader left; `stop` removes it if this session wrote it.
class zookeeper_job_master_election_service : public leader_election_service {
public:
  zookeeper_job_master_election_service(std::shared_ptr<ha::zookeeper_client> client,
                                        std::string component_path,
                                        std::shared_ptr<spdlog::logger> logger);
  ~zookeeper_job_master_election_service() override;

  void start(leader_contender& contender) override;
  void stop() override;
  void confirm_leadership(const rpc::fencing_token& session_id,
                          const leader_address& address) override;
  bool has_leadership(const rpc::fencing_token& session_id) const override;

private:
  std::shared_ptr<ha::zookeeper_client> client_;
  std::string component_path_;
  std::string info_path_;
  std::shared_ptr<spdlog::logger> log_;
  mutable std::mutex mtx_;
  leader_contender* contender_ = nullptr;
  rpc::fencing_token session_id_;
  /// When the session last answered (steady clock ticks); has_leadership reads again when stale.
  mutable std::atomic<std::chrono::steady_clock::rep> verified_{0};
  bool stopped_ = false;
};

class zookeeper_leader_retrieval_service : public leader_retrieval_service {
public:
  zookeeper_leader_retrieval_service(std::shared_ptr<ha::zookeeper_client> client,
                                     std::string component_path,
                                     std::shared_ptr<spdlog::logger> logger);
  /// stop().
  ~zookeeper_leader_retrieval_service() override;

  /// Follows the connection info; `listener` must outlive stop(). Once per service.
  void start(leader_retrieval_listener& listener) override;
  /// Idempotent; no notification runs after it returns.
  void stop() override;

private:
  struct state;
  std::shared_ptr<state> state_;
  std::thread worker_;
};

} // namespace flint::leader
