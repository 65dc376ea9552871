#pragma once
/// The input gates of one consuming task, wired to their producers (Flink's SingleInputGates as
/// NettyShuffleEnvironment#createInputGates makes them, with their channels' partition request
/// clients): what the task reads records from, round robin over its gates.

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/network/availability_listener.hpp"
#include "runtime/network/checkpoint_barrier_handler.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/input_gate_factory.hpp"
#include "runtime/network/result_partition_id.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

namespace flint::network {

class shuffle_environment;
namespace transport {
class connection_cache;
class remote_channel_client;
} // namespace transport

/// The consuming task, as its inputs see it (Flink's ShuffleIOOwnerContext plus the task's mailbox).
struct input_owner {
  /// Names the task in error messages.
  std::string task_name;
  /// Asks the task for another step (any thread): a channel got data or a producer registered.
  availability_listener wake;
  /// The task's actor, where producers' servers send its remote channels' buffers (called on the
  /// task's thread; an invalid handle fails a task with remote channels).
  std::function<caf::actor()> actor;
  /// Watches a producer's server: its end reaches the task as a `caf::down_msg`.
  std::function<void(const caf::actor&)> monitor;
};

/// Flink's Clock as the barrier handling reads it, once per barrier (never per record): relative
/// nanoseconds time the alignment; the wall clock's milliseconds give the start delay (a
/// barrier's timestamp is the JobMaster's wall clock). Tests set a manual one.
struct barrier_clock {
  std::function<std::int64_t()> relative_nanos;
  std::function<std::int64_t()> absolute_millis;
  /// steady_clock and system_clock.
  static barrier_clock system();
};

/// What the inputs measured of the last checkpoint they aligned (Flink's CheckpointBarrierHandler
/// figures: checkpointStartDelayNanos, checkpointAlignmentTime, bytesProcessedDuringAlignment).
struct checkpoint_alignment {
  std::int64_t checkpoint_id = -1;
  /// From the barrier's timestamp to its first arrival here, 0 when the clocks disagree.
  std::int64_t start_delay_nanos = 0;
  /// From the first barrier to the last (0 with one channel: nothing to align).
  std::int64_t alignment_duration_nanos = 0;
  /// Bytes read from the channels not blocked yet during the alignment.
  std::int64_t bytes_processed = 0;
  friend bool operator==(const checkpoint_alignment&, const checkpoint_alignment&) = default;
};

/// A buffer or event of one of the task's gates.
struct gate_buffer {
  std::size_t gate = 0;
  buffer_or_event data;
};

/// Used on the consuming task's thread only (channels report data from any thread).
class task_inputs {
public:
  /// The inputs of `tdd`: per input gate descriptor a gate from `factory`, whose channel c is
  /// local when producer c runs in this process (shuffle_environment::create_inputs).
  static expected<std::unique_ptr<task_inputs>> create(std::shared_ptr<shuffle_environment> shuffle,
                                                       const input_gate_factory& factory,
                                                       const graph::task_deployment_descriptor& tdd,
                                                       input_owner owner);

  task_inputs(std::shared_ptr<shuffle_environment> shuffle, graph::job_id job, input_owner owner,
              std::vector<graph::input_gate_deployment_descriptor> descriptors,
              std::shared_ptr<result_partition_manager> partitions,
              std::shared_ptr<transport::connection_cache> connections);
  /// release()
  ~task_inputs();
  task_inputs(const task_inputs&) = delete;
  task_inputs& operator=(const task_inputs&) = delete;

  /// Requests every subpartition not requested yet. A local producer that has not registered
  /// its partition yet wakes the task when it does (has_pending_requests: call again then); a
  /// remote channel sends its partition request to the producer's server, which the task then
  /// monitors (the server's refusals are retried after Flink's back-off).
  expected<unit> request_partitions();
  bool has_pending_requests() const noexcept { return pending_requests_; }

  /// The next buffer or event, round robin over the gates; nothing when none is queued (the
  /// owner's wake runs when one is). End-of-partition marks its channel consumed.
  ///
  /// Checkpoint barriers are aligned here (exactly-once, barrier_aligner): a channel that
  /// delivered barrier n is held until every live channel of every gate has, and the task gets
  /// barrier n once, as one event, when the last one came (before any record after it).
  std::optional<gate_buffer> poll_next();
  /// The figures of the last checkpoint whose barrier poll_next returned (checkpoint_id -1:
  /// none yet).
  const checkpoint_alignment& last_alignment() const noexcept { return last_alignment_; }
  /// Before the first buffer.
  void set_clock(barrier_clock clock) { clock_ = std::move(clock); }
  /// Where to publish the start (the clock's relative nanoseconds) of the alignment in progress,
  /// 0 when none: the task's checkpointAlignmentTime gauge reads it from another thread.
  void set_alignment_started_gauge(std::shared_ptr<std::atomic<std::int64_t>> gauge) {
    alignment_started_gauge_ = std::move(gauge);
  }
  /// Checkpoints whose alignment was given up (a newer barrier overtook them) since the last
  /// call: the task declines them.
  std::vector<std::int64_t> take_aborted_checkpoints();
  bool has_aborted_checkpoints() const noexcept { return !aborted_checkpoints_.empty(); }
  bool is_blocked(std::size_t gate, std::size_t channel) const;
  /// The JobMaster aborted `checkpoint_id` (declined elsewhere, timed out): the channels held
  /// for its alignment are read again.
  void cancel_checkpoint(std::int64_t checkpoint_id);
  /// `execution.checkpointing.mode: AT_LEAST_ONCE`: barriers are tracked, no channel is held
  /// (Flink's CheckpointBarrierTracker). Before the first buffer.
  void set_at_least_once(bool on) noexcept { at_least_once_ = on; }
  /// True once every channel of every gate delivered end-of-partition.
  bool is_finished() const;

  /// A message the task's actor has no handler for: true when it was one of the transport's
  /// (network_router.hpp), handed to the remote channel it names; a message for a released
  /// channel is dropped.
  bool on_message(caf::type_erased_tuple& content);
  /// Why the remote channels cannot go on (a refused request, a lost server, a bad buffer); the
  /// task fails with it.
  const std::optional<error>& failure() const noexcept { return failure_; }

  std::size_t num_gates() const noexcept { return gates_.size(); }
  std::size_t num_channels(std::size_t gate) const { return gates_.at(gate).channels.size(); }
  /// Remote input channels with a client (0 while every producer is in this process).
  std::size_t num_remote_channels() const;
  /// Flink's buffers.inPoolUsage as the gates' floating pools show it: their buffers in use over
  /// their capacity, 0..1 (0 while every producer is in this process: local channels read the
  /// producers' own buffers, and Flink's figure ignores them too).
  float floating_pool_usage() const;
  /// Whether `channel` of `gate` is fed by a producer in another process (numBytesInRemote).
  bool is_remote(std::size_t gate, std::size_t channel) const {
    return gate < gates_.size() && channel < gates_[gate].channels.size()
      && gates_[gate].channels[channel].client != nullptr;
  }

  /// Cancels the remote readers whose partition did not end, reports the other subpartitions
  /// consumed, and releases the gates. Idempotent.
  void release() noexcept;

private:
  struct channel_state {
    result_partition_id partition;
    std::size_t subpartition = 0;
    /// Set for a remote channel once requested: feeds the channel from the task's mailbox.
    std::unique_ptr<transport::remote_channel_client> client;
    bool requested = false;
    bool consumed = false;
  };
  struct gate_state {
    std::unique_ptr<input_gate> gate;
    std::vector<channel_state> channels;
  };
  class routes;

  void add_gate(std::unique_ptr<input_gate> gate);
  std::optional<gate_buffer> poll_gates();
  /// The barrier handler's decisions: exactly-once alignment, or at-least-once tracking.
  barrier_decision barrier_arrived(std::size_t flat, const checkpoint_barrier& barrier);
  barrier_decision channel_ended(std::size_t flat);
  std::size_t total_channels() const;
  std::size_t flat_channel(std::size_t gate, std::size_t channel) const;
  /// Resumes released channels, notes an aborted checkpoint, and returns the aligned barrier.
  std::optional<gate_buffer> apply(const barrier_decision& decision, std::size_t gate,
                                   std::size_t channel);
  expected<unit> connect(std::size_t gate, std::size_t channel);
  void fail(error cause);
  /// Flink's markAlignmentStart (with `and_end`: markAlignmentStartAndEnd, one barrier was all).
  void mark_alignment_start(const checkpoint_barrier& barrier, bool and_end);
  void mark_alignment_end(const checkpoint_barrier& barrier);
  /// Starts (`start_nanos` > 0) or stops the alignment being measured, and publishes it.
  void set_aligning(bool on, std::int64_t start_nanos = 0);

  std::shared_ptr<shuffle_environment> shuffle_;
  const graph::job_id job_;
  input_owner owner_;
  const std::vector<graph::input_gate_deployment_descriptor> descriptors_;
  std::shared_ptr<result_partition_manager> partitions_;
  std::shared_ptr<transport::connection_cache> connections_;
  std::vector<gate_state> gates_;
  std::unique_ptr<routes> routes_;
  std::size_t next_gate_ = 0;
  /// Made at the first barrier, over every channel of every gate.
  /// Made at the first barrier or end-of-partition, whichever comes first.
  std::optional<barrier_aligner> aligner_;
  std::optional<barrier_tracker> tracker_;
  bool at_least_once_ = false;
  /// An alignment that an end-of-partition completed: returned by the next poll.
  std::optional<gate_buffer> aligned_;
  std::vector<std::int64_t> aborted_checkpoints_;
  barrier_clock clock_ = barrier_clock::system();
  /// The alignment being measured (while `aligning_`), and the last one that completed.
  checkpoint_alignment measuring_;
  checkpoint_alignment last_alignment_;
  std::int64_t alignment_start_nanos_ = 0;
  bool aligning_ = false;
  std::shared_ptr<std::atomic<std::int64_t>> alignment_started_gauge_;
  bool pending_requests_ = false;
  bool released_ = false;
  std::optional<error> failure_;
};

} // namespace flint::network
