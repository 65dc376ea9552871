#include "runtime/network/result_partition_manager.hpp"

#include <utility>
#include <vector>

namespace flint::network {

expected<unit> result_partition_manager::register_partition(
  std::shared_ptr<result_partition> partition) {
  if (!partition)
    return make_error(errc::invalid_argument, "cannot register a null result partition");
  std::lock_guard<std::mutex> guard{mutex_};
  auto [it, inserted] = partitions_.emplace(partition->id(), partition);
  if (!inserted)
    return make_error(errc::illegal_state,
                      "result partition " + to_string(partition->id()) + " is already registered");
  return unit{};
}

expected<unit> result_partition_manager::release_partition(const result_partition_id& id) {
  std::shared_ptr<result_partition> partition;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto it = partitions_.find(id);
    if (it == partitions_.end())
      return make_error(errc::not_found, "result partition " + to_string(id) + " not found");
    partition = std::move(it->second);
    partitions_.erase(it);
  }
  partition->release();
  return unit{};
}

expected<std::shared_ptr<result_partition>> result_partition_manager::find(
  const result_partition_id& id) const {
  std::lock_guard<std::mutex> guard{mutex_};
  auto it = partitions_.find(id);
  if (it == partitions_.end())
    return make_error(errc::not_found, "result partition " + to_string(id) + " not found");
  return it->second;
}

expected<std::unique_ptr<result_subpartition_view>>
result_partition_manager::create_subpartition_view(const result_partition_id& id,
                                                   std::size_t subpartition,
                                                   availability_listener listener) {
  auto partition = find(id);
  if (!partition)
    return partition.error();
  return (*partition)->create_subpartition_view(subpartition, std::move(listener));
}

void result_partition_manager::release_all() {
  std::map<result_partition_id, std::shared_ptr<result_partition>> all;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    all.swap(partitions_);
  }
  for (auto& [id, partition] : all)
    partition->release();
}

std::size_t result_partition_manager::num_partitions() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return partitions_.size();
}

} // namespace flint::network
