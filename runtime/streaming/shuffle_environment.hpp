#pragma once
/// The network side of the TaskExecutors of one process (Flink's NettyShuffleEnvironment, local
/// part): the global buffer pool, result partitions by job, and their lifecycle.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/file_channel_manager.hpp"
#include "runtime/network/memory_budget.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace flint::streaming {

class remote_channels;

/// Shared by every task of the TaskExecutors in one process; thread-safe.
///
/// Partitions are looked up per job, so two runs of one program never meet. A pipelined partition
/// is released (its pool destroyed) once its producer finished and every subpartition was consumed
/// (end-of-partition read, or its consumer went away), or at once when its producer fails or is
/// cancelled (Flink: released on consumption, or with the failed task).
///
/// A BLOCKING partition holds its data (bounded_blocking_subpartition: heap up to
/// `taskmanager.network.blocking-shuffle.memory-budget` for all of them, then files in
/// `io.tmp.dirs`/flint-netty-shuffle-<pid>-<random>/job-<job id>/) and is read any number of
/// times; consumption does not release it. It goes when its producer fails or is cancelled, when
/// a new attempt of its producer makes it anew, with release_partitions (the JobMaster's partition
/// release), with release_job (the job left the TaskExecutor) and on destruction.
class shuffle_environment {
public:
  explicit shuffle_environment(network::network_config config = {});
  /// Releases every partition and deletes the spill folders.
  ~shuffle_environment();
  shuffle_environment(const shuffle_environment&) = delete;
  shuffle_environment& operator=(const shuffle_environment&) = delete;

  const network::network_config& config() const noexcept { return config_; }
  network::network_buffer_pool& buffer_pool() noexcept { return *pool_; }
  const std::shared_ptr<network::network_buffer_pool>& buffer_pool_ptr() const noexcept { return pool_; }

  /// Creates a partition of `type` with its own bounded pool and makes it reachable; wakes
  /// consumers waiting for it. A BLOCKING one gets bounded blocking subpartitions and replaces a
  /// blocking partition of an earlier attempt under the same id; its spill folder is made now, so
  /// an unusable `io.tmp.dirs` fails here with the path in the message.
  expected<std::shared_ptr<network::result_partition>>
  create_partition(const graph::job_id& job, network::result_partition_id id, std::size_t num_subpartitions,
                   graph::result_partition_type type = graph::result_partition_type::pipelined_bounded);
  /// The job's partition manager, for its local input channels (kept alive by the pointer).
  std::shared_ptr<network::result_partition_manager> partitions_of(const graph::job_id& job);
  /// The job's partition manager if the job has partitions here, else null (the partition
  /// request server's lookup: a request never creates state).
  std::shared_ptr<network::result_partition_manager> find_partitions(const graph::job_id& job) const;
  /// Runs `listener` once when partition `id` of `job` is registered; false (nothing registered)
  /// when it is registered already.
  bool notify_when_registered(const graph::job_id& job, const network::result_partition_id& id,
                              network::availability_listener listener);

  /// The producer wrote end-of-partition.
  void producer_finished(const graph::job_id& job, const network::result_partition_id& id);
  /// The producer failed or was cancelled: release now.
  void producer_failed(const graph::job_id& job, const network::result_partition_id& id);
  /// The consumer of `subpartition` is done with it (it read end-of-partition or went away); a
  /// subpartition counts once however often it is reported (a local consumer and the partition
  /// request server may both report it). Blocking partitions do not count consumption.
  void subpartition_consumed(const graph::job_id& job, const network::result_partition_id& id,
                             std::size_t subpartition);
  /// Releases the named partitions of `job` whatever their type (Flink's
  /// TaskExecutorGateway#releasePartitions, sent by the JobMaster once their consumers are done);
  /// unknown ids are ignored.
  void release_partitions(const graph::job_id& job, const std::vector<network::result_partition_id>& ids);
  /// Releases every partition of `job` and deletes its spill folder (the job left the
  /// TaskExecutor, or ended).
  void release_job(const graph::job_id& job);
  /// Releases every partition of every job and deletes the spill folders (shutdown).
  void release_all();

  /// Registered partitions over all jobs.
  std::size_t num_partitions() const;
  /// Registered partitions of `job`.
  std::size_t num_partitions(const graph::job_id& job) const;
  /// The spill folders (tests, diagnostics).
  network::file_channel_manager& spill_files() noexcept { return files_; }
  /// What blocking partitions keep in memory now, of the budget.
  const network::memory_budget& blocking_memory() const noexcept { return *blocking_memory_; }
  /// Jobs with a partition manager here (an emptied one goes once nobody reads it).
  std::size_t num_jobs() const;

  /// This process's remote channels once streaming_environment::enable_remote_channels ran; null
  /// while every channel is local. Stream tasks read it when they set up their input gates.
  std::shared_ptr<remote_channels> remote() const;
  void set_remote(std::shared_ptr<remote_channels> remote);

  /// A stream task began / ended (its resources are released when it ends).
  void task_started();
  void task_ended();
  std::size_t running_tasks() const;
  /// Waits (real time) until no stream task is alive; false on timeout.
  bool await_no_tasks(std::chrono::milliseconds timeout) const;

private:
  struct key {
    graph::job_id job;
    network::result_partition_id id;
    friend auto operator<=>(const key&, const key&) = default;
  };
  struct entry {
    std::shared_ptr<network::result_partition> partition;
    std::set<std::size_t> consumed;
    bool producer_done = false;
  };

  std::shared_ptr<network::result_partition_manager> partitions_locked(const graph::job_id& job);
  void release(const key& k);
  expected<std::vector<std::shared_ptr<network::result_subpartition>>>
  blocking_subpartitions(const graph::job_id& job, const network::result_partition_id& id, std::size_t n);

  const network::network_config config_;
  const std::shared_ptr<network::network_buffer_pool> pool_;
  // Before the partitions: their files go first, then the folders.
  network::file_channel_manager files_;
  const std::shared_ptr<network::memory_budget> blocking_memory_;
  mutable std::mutex mutex_;
  mutable std::condition_variable tasks_changed_;
  std::map<graph::job_id, std::shared_ptr<network::result_partition_manager>> managers_;
  std::map<key, entry> entries_;
  std::map<key, std::vector<network::availability_listener>> waiters_;
  std::size_t tasks_ = 0;
  std::shared_ptr<remote_channels> remote_;
};

} // namespace flint::streaming
