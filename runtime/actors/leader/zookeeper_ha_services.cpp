#include "runtime/actors/leader/zookeeper_ha_services.hpp"

#include <utility>

#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/ha/zookeeper_paths.hpp"

namespace flint::leader {

namespace {

/// Stamps this process's address on confirmations that carry only a local handle.
class advertised_election final : public leader_election_service {
public:
  advertised_election(std::unique_ptr<leader_election_service> inner, std::string host,
                      std::uint16_t port)
    : inner_(std::move(inner)),
      host_(std::move(host)),
      port_(port) {}
  void start(leader_contender& contender) override { inner_->start(contender); }
  void stop() override { inner_->stop(); }
  void confirm_leadership(const rpc::fencing_token& session_id,
                          const leader_address& address) override {
    auto published = address;
    if (published.host.empty()) {
      published.host = host_;
      published.port = port_;
    }
    inner_->confirm_leadership(session_id, published);
  }
  bool has_leadership(const rpc::fencing_token& session_id) const override {
    return inner_->has_leadership(session_id);
  }

private:
  std::unique_ptr<leader_election_service> inner_;
  std::string host_;
  std::uint16_t port_;
};

} // namespace

zookeeper_ha_services::zookeeper_ha_services(std::shared_ptr<ha::zookeeper_client> client,
                                             zookeeper_ha_config config,
                                             std::shared_ptr<spdlog::logger> logger)
  : client_(std::move(client)),
    config_(std::move(config)),
    log_(std::move(logger)) {}

std::string zookeeper_ha_services::component_path(const std::string& component) const {
  return ha::cluster_path(config_.root, config_.cluster_id) + "/leader/" + component;
}

std::unique_ptr<leader_election_service> zookeeper_ha_services::election(
  const std::string& component) {
  auto election = std::make_unique<zookeeper_leader_election_service>(
    client_, component_path(component), config_.suspended_grace, log_);
  if (config_.advertised_host.empty())
    return election;
  return std::make_unique<advertised_election>(std::move(election), config_.advertised_host,
                                               config_.advertised_port);
}

std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::retrieval(
  const std::string& component) {
  auto retrieval =
    std::make_unique<zookeeper_leader_retrieval_service>(client_, component_path(component), log_);
  if (config_.system == nullptr)
    return retrieval;
  return std::make_unique<resolving_leader_retrieval>(*config_.system, std::move(retrieval),
                                                      config_.resolving);
}

std::unique_ptr<leader_election_service> zookeeper_ha_services::resource_manager_election() {
  return election("resource_manager");
}
std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::resource_manager_retrieval() {
  return retrieval("resource_manager");
}
std::unique_ptr<leader_election_service> zookeeper_ha_services::dispatcher_election() {
  return election("dispatcher");
}
std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::dispatcher_retrieval() {
  return retrieval("dispatcher");
}
std::unique_ptr<leader_election_service> zookeeper_ha_services::job_master_election(
  const graph::job_id& job) {
  std::unique_ptr<leader_election_service> election =
    std::make_unique<zookeeper_job_master_election_service>(
      client_, component_path("job-" + job.to_string()), log_);
  if (config_.advertised_host.empty())
    return election;
  return std::make_unique<advertised_election>(std::move(election), config_.advertised_host,
                                               config_.advertised_port);
}
std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::job_master_retrieval(
  const graph::job_id& job) {
  return retrieval("job-" + job.to_string());
}

} // namespace flint::leader
