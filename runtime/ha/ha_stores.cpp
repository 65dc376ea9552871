#include "runtime/ha/ha_stores.hpp"

#include <utility>

#include "runtime/ha/zookeeper_paths.hpp"

namespace flint::ha {

namespace {

class standalone_ha_stores final : public ha_stores {
public:
  job_graph_store& job_graphs() override { return graphs_; }
  job_result_store& job_results() override { return results_; }
  std::unique_ptr<ha::checkpoint_id_counter> checkpoint_id_counter(const graph::job_id&) override {
    return std::make_unique<standalone_checkpoint_id_counter>();
  }
  std::unique_ptr<completed_checkpoint_store> completed_checkpoints(const graph::job_id&) override {
    return std::make_unique<standalone_completed_checkpoint_store>();
  }

private:
  standalone_job_graph_store graphs_;
  standalone_job_result_store results_;
};

class zookeeper_ha_stores final : public ha_stores {
public:
  zookeeper_ha_stores(std::shared_ptr<zookeeper_client> client, ha_store_paths paths,
                      std::shared_ptr<spdlog::logger> log)
    : client_(std::move(client)),
      cluster_(cluster_path(paths.root, paths.cluster_id)),
      checkpoints_dir_(paths.storage_dir / paths.cluster_id / "completed_checkpoints"),
      log_(std::move(log)),
      graphs_(client_, job_graphs_path(cluster_), paths.storage_dir / paths.cluster_id, log_),
      results_(paths.storage_dir / "job-result-store" / paths.cluster_id) {}

  job_graph_store& job_graphs() override { return graphs_; }
  job_result_store& job_results() override { return results_; }
  std::unique_ptr<ha::checkpoint_id_counter> checkpoint_id_counter(
    const graph::job_id& job) override {
    return std::make_unique<zookeeper_checkpoint_id_counter>(
      client_, job_path(cluster_, job) + "/checkpoint_id_counter");
  }
  std::unique_ptr<completed_checkpoint_store> completed_checkpoints(
    const graph::job_id& job) override {
    return std::make_unique<zookeeper_completed_checkpoint_store>(
      client_, job_path(cluster_, job) + "/checkpoints", checkpoints_dir_ / job.to_string(), log_);
  }

private:
  std::shared_ptr<zookeeper_client> client_;
  std::string cluster_;
  std::filesystem::path checkpoints_dir_;
  std::shared_ptr<spdlog::logger> log_;
  zookeeper_job_graph_store graphs_;
  file_system_job_result_store results_;
};

} // namespace

std::unique_ptr<ha_stores> make_standalone_ha_stores() {
  return std::make_unique<standalone_ha_stores>();
}

std::unique_ptr<ha_stores> make_zookeeper_ha_stores(std::shared_ptr<zookeeper_client> client,
                                                    ha_store_paths paths,
                                                    std::shared_ptr<spdlog::logger> log) {
  return std::make_unique<zookeeper_ha_stores>(std::move(client), std::move(paths), std::move(log));
}

} // namespace flint::ha
