#pragma once
/// Turns where a leader is (endpoint id, host, port and leader session id) into a CAF handle its
/// followers can call (Flink: the RpcService connecting to the address a LeaderRetrievalService
/// reported). Two sources of that address:
///
/// - a fixed one (standalone clusters: the JobManager at `jobmanager.rpc.address:port`, under
///   `standalone_leader_id()`);
/// - another retrieval service that learns it (ZooKeeper's connection_info): each new address it
///   reports replaces the one being resolved; "no leader" is passed on at once.
///
/// A background thread resolves the endpoint id at host:port with `rpc::connect_endpoint`,
/// retrying every `retry_interval` until found, replaced or stopped, then notifies the listener
/// with the handle. When that handle dies (the leader's process is gone, or the endpoint ended)
/// the listener is told "no leader" and the same address is resolved again until another one is
/// reported — as Flink's TaskExecutor re-resolves its leader.
///
/// A leader published at this process's own host:port is taken from `directory` (a node cannot
/// reach itself through its middleman).
///
/// The listener is called on the resolving thread: endpoints forward into their main thread, as
/// with every leader service. `stop()` joins the thread, so no callback runs after it returns;
/// the actor system must outlive the service.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <caf/fwd.hpp>

#include "runtime/actors/leader/leader_services.hpp"

namespace flint::rpc {
class endpoint_directory;
}

namespace flint::leader {

struct resolving_retrieval_config {
  /// Pause between two resolution attempts.
  std::chrono::milliseconds retry_interval{500};
  /// Bound on one attempt's lookup once connected.
  std::chrono::milliseconds lookup_timeout{2000};
  /// This process's published address, and its endpoints (both optional).
  std::string local_host;
  std::uint16_t local_port = 0;
  rpc::endpoint_directory* directory = nullptr;
};

class resolving_leader_retrieval final : public leader_retrieval_service {
public:
  /// Resolves the fixed `target` (endpoint_id, host, port) under `session_id`.
  resolving_leader_retrieval(caf::actor_system& sys, leader_address target,
                             rpc::fencing_token session_id, resolving_retrieval_config config);
  /// Resolves whatever `source` reports; the service owns it.
  resolving_leader_retrieval(caf::actor_system& sys,
                             std::unique_ptr<leader_retrieval_service> source,
                             resolving_retrieval_config config);
  ~resolving_leader_retrieval() override;
  resolving_leader_retrieval(const resolving_leader_retrieval&) = delete;
  resolving_leader_retrieval& operator=(const resolving_leader_retrieval&) = delete;

  /// `listener` must outlive stop(). Once per service.
  void start(leader_retrieval_listener& listener) override;
  /// Idempotent; no notification runs after it returns.
  void stop() override;

  struct shared;

private:
  void run();

  caf::actor_system& sys_;
  std::unique_ptr<leader_retrieval_service> source_;
  std::unique_ptr<leader_retrieval_listener> source_listener_;
  resolving_retrieval_config config_;
  std::shared_ptr<shared> shared_;
  leader_retrieval_listener* listener_ = nullptr;
  std::thread thread_;
};

} // namespace flint::leader
