#pragma once
/// The partitions a TaskExecutor produces, by id (Flink's ResultPartitionManager).

#include "runtime/common/expected.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/result_subpartition_view.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_id.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace flint::network {

/// Producing tasks register their partitions here; local channels and the transport's
/// partition requests get subpartition views from here. One per TaskExecutor, thread-safe.
class result_partition_manager {
public:
  /// Makes `partition` reachable by its id; a second partition with the same id is refused.
  expected<unit> register_partition(std::shared_ptr<result_partition> partition);
  /// Forgets the partition and releases it.
  expected<unit> release_partition(const result_partition_id& id);
  /// The registered partition, or not_found.
  expected<std::shared_ptr<result_partition>> find(const result_partition_id& id) const;
  /// A view on `subpartition` of partition `id` whose data listener is `listener`; not_found for
  /// an unknown partition, invalid_argument for a bad subpartition index.
  expected<std::unique_ptr<result_subpartition_view>> create_subpartition_view(
    const result_partition_id& id, std::size_t subpartition, availability_listener listener);
  /// Releases and forgets every partition (TaskExecutor shutdown).
  void release_all();
  std::size_t num_partitions() const;

private:
  mutable std::mutex mutex_;
  std::map<result_partition_id, std::shared_ptr<result_partition>> partitions_;
};

} // namespace flint::network
