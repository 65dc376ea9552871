#include "runtime/actors/leader/zookeeper_ha_services.hpp"

#include <utility>

#include "runtime/actors/leader/zookeeper_leader_services.hpp"
#include "runtime/ha/zookeeper_paths.hpp"

namespace flint::leader {

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
  return std::make_unique<zookeeper_leader_election_service>(client_, component_path(component),
                                                             config_.suspended_grace, log_);
}

std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::retrieval(
  const std::string& component) {
  return std::make_unique<zookeeper_leader_retrieval_service>(client_, component_path(component),
                                                              log_);
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
  return election("job-" + job.to_string());
}
std::unique_ptr<leader_retrieval_service> zookeeper_ha_services::job_master_retrieval(
  const graph::job_id& job) {
  return retrieval("job-" + job.to_string());
}

} // namespace flint::leader
