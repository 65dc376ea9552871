#pragma once
/// Contends for one job's leadership on behalf of the Dispatcher (Flink's JobManagerRunner):
/// when granted, the Dispatcher starts a JobMaster under the granted JobMasterId; when revoked,
/// it stops it. Election callbacks may come from any thread; they are forwarded into the
/// Dispatcher's main thread, and dropped if the runner is gone by then.

#include <functional>
#include <memory>

#include "runtime/actors/leader/leader_services.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace flint::dispatcher {

class job_master_runner : public leader::leader_contender {
public:
  using granted_fn = std::function<void(const rpc::fencing_token&)>;
  using revoked_fn = std::function<void()>;

  job_master_runner(rpc::rpc_endpoint& owner, std::string description,
                    std::unique_ptr<leader::leader_election_service> election,
                    granted_fn on_granted, revoked_fn on_revoked);
  ~job_master_runner() override;

  void start();
  /// Publishes the started JobMaster as the job's leader.
  void confirm(const rpc::fencing_token& id, const leader::leader_address& address);

  void grant_leadership(const rpc::fencing_token& session_id) override;
  void revoke_leadership() override;
  std::string description() const override { return description_; }

private:
  caf::actor owner_;
  std::string description_;
  std::unique_ptr<leader::leader_election_service> election_;
  granted_fn on_granted_;
  revoked_fn on_revoked_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace flint::dispatcher
