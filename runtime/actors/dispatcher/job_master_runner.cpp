#include "runtime/actors/dispatcher/job_master_runner.hpp"

#include <caf/send.hpp>

namespace flint::dispatcher {

job_master_runner::job_master_runner(rpc::rpc_endpoint& owner, std::string description,
                                     std::unique_ptr<leader::leader_election_service> election,
                                     granted_fn on_granted, revoked_fn on_revoked)
  : owner_(caf::actor_cast<caf::actor>(&owner)),
    description_(std::move(description)),
    election_(std::move(election)),
    on_granted_(std::move(on_granted)),
    on_revoked_(std::move(on_revoked)) {}

job_master_runner::~job_master_runner() {
  *alive_ = false;
  election_->stop();
}

void job_master_runner::start() {
  election_->start(*this);
}

void job_master_runner::confirm(const rpc::fencing_token& id,
                                const leader::leader_address& address) {
  election_->confirm_leadership(id, address);
}

void job_master_runner::grant_leadership(const rpc::fencing_token& session_id) {
  caf::anon_send(owner_, rpc::run_atom::value,
                 std::function<void()>([this, alive = alive_, session_id] {
                   if (*alive)
                     on_granted_(session_id);
                 }));
}

void job_master_runner::revoke_leadership() {
  caf::anon_send(owner_, rpc::run_atom::value, std::function<void()>([this, alive = alive_] {
                   if (*alive)
                     on_revoked_();
                 }));
}

} // namespace flint::dispatcher
