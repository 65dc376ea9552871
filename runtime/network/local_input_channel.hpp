#pragma once
/// A channel whose producer runs in the same TaskExecutor (Flink's LocalInputChannel).

#include "runtime/network/input_channel.hpp"
#include "runtime/network/result_subpartition_view.hpp"

#include <memory>
#include <mutex>

namespace flint::network {

class result_partition_manager;

/// Reads the producer's subpartition view directly: a pipelined producer's buffers move to the
/// consumer without a copy and return to the producer's pool when the consumer releases them (no
/// credit is needed; the producer's bounded pool is the backpressure); a blocking subpartition's
/// reader hands out copies in its own few buffers.
class local_input_channel final : public input_channel {
public:
  /// Reads `subpartition` of `partition`, found in `partitions` (which must outlive the channel).
  local_input_channel(std::size_t channel_index, result_partition_id partition,
                      std::size_t subpartition, result_partition_manager& partitions);
  ~local_input_channel() override;

  /// Creates the subpartition view; fails clearly for an unknown partition.
  expected<unit> request_subpartition() override;
  std::optional<buffer_and_availability> get_next_buffer() override;
  void release() override;
  bool is_released() const override;

private:
  result_partition_manager& partitions_;
  mutable std::mutex mutex_;
  std::unique_ptr<result_subpartition_view> view_;
  bool released_ = false;
};

} // namespace flint::network
