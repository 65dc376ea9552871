#pragma once
/// The network side of the TaskExecutors of one process (Flink's NettyShuffleEnvironment): the
/// global buffer pool, the partition factory and result partitions by job with their lifecycle,
/// the input-gate factory, and for remote channels the partition request server and the
/// connections to the servers of other processes.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/graph/types.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/file_channel_manager.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/input_gate_factory.hpp"
#include "runtime/network/memory_budget.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_factory.hpp"
#include "runtime/network/result_partition_manager.hpp"
#include "runtime/network/task_inputs.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

namespace flint::network {

namespace transport {
class connection_cache;
class connection_manager;
} // namespace transport

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
///
/// Channels are local until enable_remote_channels: from then on a channel whose producer has
/// another (host, data port) reads over CAF from that process's partition request server.
class shuffle_environment : public std::enable_shared_from_this<shuffle_environment> {
public:
  explicit shuffle_environment(network_config config = {});
  /// Releases every partition and deletes the spill folders; stops remote channels (their actor
  /// system must still be alive then).
  ~shuffle_environment();
  shuffle_environment(const shuffle_environment&) = delete;
  shuffle_environment& operator=(const shuffle_environment&) = delete;

  const network_config& config() const noexcept { return config_; }
  network_buffer_pool& buffer_pool() noexcept { return *pool_; }
  const std::shared_ptr<network_buffer_pool>& buffer_pool_ptr() const noexcept { return pool_; }

  // -- partitions ---------------------------------------------------------------------------

  /// Creates a partition of `type` with its own bounded pool and makes it reachable; wakes
  /// consumers waiting for it. A BLOCKING one replaces a blocking partition of an earlier attempt
  /// under the same id; an unusable `io.tmp.dirs` fails it with the path in the message.
  expected<std::shared_ptr<result_partition>> create_partition(
    const graph::job_id& job, result_partition_id id, std::size_t num_subpartitions,
    graph::result_partition_type type = graph::result_partition_type::pipelined_bounded);
  /// The partitions a deployed task produces, one per result partition descriptor, in order
  /// (Flink's NettyShuffleEnvironment#createResultPartitionWriters); on error none stays.
  expected<std::vector<std::shared_ptr<result_partition>>> create_partitions(
    const graph::task_deployment_descriptor& tdd);
  /// The job's partition manager, for its local input channels (kept alive by the pointer).
  std::shared_ptr<result_partition_manager> partitions_of(const graph::job_id& job);
  /// The job's partition manager if the job has partitions here, else null (the partition
  /// request server's lookup: a request never creates state).
  std::shared_ptr<result_partition_manager> find_partitions(const graph::job_id& job) const;
  /// Runs `listener` once when partition `id` of `job` is registered; false (nothing registered)
  /// when it is registered already.
  bool notify_when_registered(const graph::job_id& job, const result_partition_id& id,
                              availability_listener listener);

  /// The producer wrote end-of-partition.
  void producer_finished(const graph::job_id& job, const result_partition_id& id);
  /// The producer failed or was cancelled: release now.
  void producer_failed(const graph::job_id& job, const result_partition_id& id);
  /// The consumer of `subpartition` is done with it (it read end-of-partition or went away); a
  /// subpartition counts once however often it is reported (a local consumer and the partition
  /// request server may both report it). Blocking partitions do not count consumption.
  void subpartition_consumed(const graph::job_id& job, const result_partition_id& id,
                             std::size_t subpartition);
  /// Releases the named partitions of `job` whatever their type (Flink's
  /// TaskExecutorGateway#releasePartitions, sent by the JobMaster once their consumers are done);
  /// unknown ids are ignored.
  void release_partitions(const graph::job_id& job, const std::vector<result_partition_id>& ids);
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
  file_channel_manager& spill_files() noexcept { return files_; }
  /// What blocking partitions keep in memory now, of the budget.
  const memory_budget& blocking_memory() const noexcept { return *blocking_memory_; }
  /// Jobs with a partition manager here (an emptied one goes once nobody reads it).
  std::size_t num_jobs() const;

  // -- gates --------------------------------------------------------------------------------

  /// A set-up gate of `job` with one channel per descriptor (the gate factory; local channels
  /// read the job's partitions here). Nothing is requested yet.
  expected<std::unique_ptr<input_gate>> create_input_gate(
    const graph::job_id& job, std::size_t gate_index,
    const std::vector<channel_descriptor>& channels);
  /// The input gates of a deployed task, one per input gate descriptor: a local channel per
  /// producer in this process, a remote one per producer elsewhere (Flink's
  /// NettyShuffleEnvironment#createInputGates). `owner` is the consuming task.
  expected<std::unique_ptr<task_inputs>> create_inputs(const graph::task_deployment_descriptor& tdd,
                                                       input_owner owner);

  // -- remote channels ----------------------------------------------------------------------

  /// Publishes this process's partition request server on `port` (0 = any free port; Flink's
  /// taskmanager.data.port) at `bind_address` (empty: every interface), and from now on reaches
  /// producers on other processes over CAF's middleman (`sys` must have it loaded). Returns the
  /// bound port: the TaskExecutor's data_port, which it advertises with `advertised_host`.
  /// Gates created earlier keep local channels. The environment must be owned by a shared_ptr.
  expected<std::uint16_t> enable_remote_channels(caf::actor_system& sys,
                                                 std::string advertised_host, std::uint16_t port,
                                                 std::string bind_address);
  /// Stops the partition request server and forgets the peers; call it before `sys` goes away
  /// (the destructor does it too, which is fine while `sys` lives).
  void disable_remote_channels();
  /// The data port of enable_remote_channels, 0 while disabled.
  std::uint16_t data_port() const;
  /// The connections to other processes' servers; null while every channel is local.
  std::shared_ptr<transport::connection_cache> connections() const;
  /// Uses `connections` instead (tests: a server of the same actor system, a scripted connector);
  /// null makes every channel local again.
  void set_connections(std::shared_ptr<transport::connection_cache> connections);

  // -- tasks --------------------------------------------------------------------------------

  /// A stream task began / ended (its resources are released when it ends).
  void task_started();
  void task_ended();
  std::size_t running_tasks() const;
  /// Waits (real time) until no stream task is alive; false on timeout.
  bool await_no_tasks(std::chrono::milliseconds timeout) const;

private:
  struct key {
    graph::job_id job;
    result_partition_id id;
    friend auto operator<=>(const key&, const key&) = default;
  };
  struct entry {
    std::shared_ptr<result_partition> partition;
    std::set<std::size_t> consumed;
    bool producer_done = false;
  };
  std::shared_ptr<result_partition_manager> partitions_locked(const graph::job_id& job);
  void release(const key& k);

  const network_config config_;
  const std::shared_ptr<network_buffer_pool> pool_;
  // Before the partitions: their files go first, then the folders.
  file_channel_manager files_;
  const std::shared_ptr<memory_budget> blocking_memory_;
  const result_partition_factory partition_factory_;
  const input_gate_factory gate_factory_;
  mutable std::mutex mutex_;
  mutable std::condition_variable tasks_changed_;
  std::map<graph::job_id, std::shared_ptr<result_partition_manager>> managers_;
  std::map<key, entry> entries_;
  std::map<key, std::vector<availability_listener>> waiters_;
  std::size_t tasks_ = 0;
  /// The published partition request server (enable_remote_channels).
  std::unique_ptr<transport::connection_manager> remote_;
  /// remote_'s connections, or a test's; null while every channel is local.
  std::shared_ptr<transport::connection_cache> connections_;
};

/// The partition request server of `shuffle`'s process: it reads the partitions of the job each
/// request names and reports finished or cancelled readers as consumed subpartitions, so a
/// pipelined partition is released once every consumer is done (a blocking one stays).
/// `always_copy` sends bytes even to consumers in this actor system (tests of the wire form).
/// enable_remote_channels spawns and publishes one; tests spawn one to serve without the
/// middleman.
caf::actor spawn_partition_server(caf::actor_system& sys,
                                  const std::shared_ptr<shuffle_environment>& shuffle,
                                  bool always_copy = false);

} // namespace flint::network
