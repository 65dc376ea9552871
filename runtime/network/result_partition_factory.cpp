#include "runtime/network/result_partition_factory.hpp"

#include "runtime/network/bounded_blocking_subpartition.hpp"

#include <utility>
#include <vector>

namespace flint::network {

result_partition_factory::result_partition_factory(const network_config& config,
                                                   std::shared_ptr<network_buffer_pool> global,
                                                   file_channel_manager& files,
                                                   std::shared_ptr<memory_budget> blocking_memory)
  : config_(config),
    global_(std::move(global)),
    files_(files),
    blocking_memory_(std::move(blocking_memory)) {}

std::string result_partition_factory::job_folder(const graph::job_id& job) {
  return "job-" + job.to_string();
}

expected<std::shared_ptr<result_partition>> result_partition_factory::create(
  const graph::job_id& job, const result_partition_id& id, std::size_t num_subpartitions,
  graph::result_partition_type type) const {
  if (num_subpartitions == 0)
    return make_error(errc::invalid_argument,
                      "result partition " + to_string(id) + " needs at least one subpartition");
  bool blocking = type == graph::result_partition_type::blocking;
  std::vector<std::shared_ptr<result_subpartition>> subpartitions;
  if (blocking) {
    auto folder = files_.directory(job_folder(job));
    if (!folder)
      return make_error(
        folder.error().code,
        "Cannot keep blocking partition " + to_string(id) + ": " + folder.error().message);
    subpartitions.reserve(num_subpartitions);
    auto stem = id.result.to_string() + "-" + std::to_string(id.partition_number);
    for (std::size_t i = 0; i < num_subpartitions; ++i)
      subpartitions.push_back(std::make_shared<bounded_blocking_subpartition>(
        i, *folder / (stem + "." + std::to_string(i) + ".spill"), blocking_memory_));
  }
  auto pool = global_->create_buffer_pool(config_.partition_pool_min(num_subpartitions),
                                          config_.partition_pool_max(num_subpartitions));
  if (!pool)
    return make_error(
      pool.error().code,
      "Insufficient network buffers for partition " + to_string(id) + ": " + pool.error().message);
  if (blocking)
    return std::make_shared<result_partition>(id, std::move(subpartitions), std::move(*pool), type);
  return std::make_shared<result_partition>(id, num_subpartitions, std::move(*pool));
}

} // namespace flint::network
