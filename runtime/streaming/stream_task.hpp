#pragma once
/// The invokable of every streaming task (Flink's StreamTask with SourceStreamTask and
/// OneInputStreamTask folded in), run one mailbox turn at a time by the task actor.
///
/// invoke, cut into steps: the first step is before_invoke (its result partitions and input gates
/// from the shuffle environment, which decides which channels are local and which remote; the
/// operator chain built from the JobVertex; operators opened tail first); each later step is one
/// default action of the mailbox loop (pull the source, or
/// process the records of the available input buffers), at most `records_per_step` records and
/// about a millisecond (step_budget), and
/// it ends early when an output runs out of buffers (backpressure: the task then waits for a
/// buffer-available wake-up) or no input is there (it waits for a data wake-up). Once every input
/// ended: finish the operators head first, flush, end-of-partition, close: FINISHED. The
/// destructor is clean_up_invoke: operators closed, inputs released, the partitions of a task that
/// did not finish released.

#include "runtime/actors/task_executor/invokable.hpp"
#include "runtime/graph/job_graph.hpp"
#include "runtime/graph/stream_graph.hpp"
#include "runtime/graph/task_deployment_descriptor.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/task_inputs.hpp"
#include "runtime/streaming/operator_api.hpp"
#include "runtime/streaming/operator_chain.hpp"
#include "runtime/streaming/partition_writer.hpp"
#include "runtime/streaming/snapshot_uploader.hpp"
#include "runtime/metrics/task_io_metrics.hpp"
#include "runtime/streaming/time/element_time.hpp"
#include "runtime/streaming/time/processing_time_service.hpp"
#include "runtime/streaming/time/status_watermark_valve.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <chrono>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace flint::streaming {

class stream_task final : public task_executor::invokable {
public:
  /// Records one step handles at most before the mailbox gets a turn.
  static constexpr std::size_t records_per_step = 4096;

  /// `local_state`: where keyed state backends keep their working files (null: each backend
  /// makes a private directory of its own).
  stream_task(job_program program, graph::task_deployment_descriptor tdd,
              std::shared_ptr<network::shuffle_environment> shuffle,
              std::function<void(std::string_view)> write_stdout,
              std::shared_ptr<local_state_root> local_state = nullptr);
  ~stream_task() override;

  void attach(std::shared_ptr<task_executor::task_context> context) override;
  expected<bool> step() override;
  void cancel() override { canceled_ = true; }
  bool has_work() const override { return has_work_ || (inputs_ && inputs_->failure()); }
  void bind_metrics(std::shared_ptr<metrics::task_io_metrics> io) override {
    io_ = std::move(io);
    publish_alignment_gauge();
  }
  bool waits_for_output() const override { return waits_for_output_; }
  void on_timer(std::uint64_t id) override;
  /// Checkpoint n starts here: at a source (snapshot, barrier on every output, acknowledge once
  /// the state is written), or at a task whose producers all finished (FLIP-147: it takes its
  /// part when its input ended). Other tasks take theirs at the aligned barrier.
  bool trigger_checkpoint(std::int64_t checkpoint_id, std::int64_t timestamp, bool stop) override;
  void drain_before_stop() override { drain_on_stop_ = true; }
  void notify_checkpoint_complete(std::int64_t checkpoint_id) override;
  void notify_checkpoint_aborted(std::int64_t checkpoint_id) override;
  /// The remote channels' mails (buffers, partition errors, request retries), for the inputs'
  /// router; a mail for a channel already released is dropped.
  bool on_message(caf::type_erased_tuple& content) override {
    return inputs_ && inputs_->on_message(content);
  }

  /// Remote input channels of this task (0 while every producer is in this process).
  std::size_t num_remote_channels() const { return inputs_ ? inputs_->num_remote_channels() : 0; }

private:
  /// waiting_for_final_checkpoint: the input ended, and a sink commits only on checkpoints: a
  /// checkpoint taken from here on must complete before the task finishes.
  enum class phase { created, running, waiting_for_final_checkpoint, ending, finished };

  expected<unit> before_invoke();
  expected<unit> build_chain();
  expected<unit> create_inputs();
  /// Writes what waits in the writers; false (and a wake-up registered) while out of buffers.
  bool drain_outputs();
  void run_source();
  expected<unit> run_input();
  void end_input();
  /// Copies the counts of the writers and of the counting operators into io_.
  void publish_metrics();
  /// Lets the inputs publish the alignment in progress into io_ (once both exist).
  void publish_alignment_gauge();
  /// Gives each operator its share of the restored checkpoint (before they open).
  expected<unit> restore_state();
  /// At an aligned barrier (or a trigger): each operator's state copied, the barrier on every
  /// output, the state written off the task's thread (acknowledged by collect_uploads).
  /// `metrics`: the start delay and alignment figures so far; the sync and async parts are
  /// timed here and the acknowledgement carries them all.
  void perform_checkpoint(const network::checkpoint_barrier& barrier,
                          state::checkpoint_metrics metrics);
  /// The figures of a checkpoint this task starts without aligning (a source's trigger, or one
  /// taken when its input ended): no alignment, start delay from the trigger's timestamp.
  static state::checkpoint_metrics triggered_metrics(const network::checkpoint_barrier& barrier);
  /// The figures of the barrier `inputs_` just aligned (-1 where they measured none).
  state::checkpoint_metrics aligned_metrics(const network::checkpoint_barrier& barrier) const;
  /// An operator holds output a checkpoint has yet to commit (only when the job checkpoints).
  bool awaits_commit() const;
  /// Acknowledges (or declines) the checkpoints whose state is written.
  void collect_uploads();
  void decline_checkpoint(std::int64_t id, const std::string& cause, bool task_not_ready = false);
  /// Flushes, ends the partitions and closes the chain; false while outputs wait for buffers, an
  /// error when a partition could not keep its data.
  expected<bool> end_outputs();
  /// The first output partition that refused data (a spill file it could not write), if any.
  std::optional<error> output_failure() const;
  void arm_flush_timer();
  /// `pipeline.auto-watermark-interval` of the job (Flink's default 200 ms).
  std::int64_t auto_watermark_interval() const;
  /// Arms the actor's timer for the earliest processing-time callback due at `time`.
  void arm_processing_timer(std::int64_t time);
  /// Runs the processing-time callbacks that came due (on the task's thread, between records).
  void fire_processing_timers();
  /// Applies what an input event changed in the valve to the head of the chain.
  void apply_valve(const status_watermark_valve::output& changed);
  /// "<producer task> (n/N)" of a flat input channel, for the trace.
  std::string describe_channel(std::size_t flat) const;
  /// Records a watermark status change in the trace: which channel, the input watermark, and
  /// which channel holds it back.
  void trace_watermark_status(std::optional<std::size_t> channel, bool idle);
  /// The input channel's index over all gates (the valve's numbering).
  std::size_t flat_channel(std::size_t gate, std::size_t channel) const {
    return gate_offsets_[gate] + channel;
  }
  void clean_up() noexcept;
  network::availability_listener waker() const;

  job_program program_;
  graph::task_deployment_descriptor tdd_;
  std::shared_ptr<network::shuffle_environment> shuffle_;
  std::function<void(std::string_view)> write_stdout_;
  std::shared_ptr<local_state_root> local_state_;
  std::shared_ptr<task_executor::task_context> context_;
  const graph::job_vertex* vertex_ = nullptr;

  /// Head first; outputs refer to the writers, so they go before them.
  std::vector<std::unique_ptr<partition_writer>> writers_;
  std::vector<std::unique_ptr<stream_operator>> operators_;
  source_operator* source_ = nullptr;
  serialized_input* input_ = nullptr;
  /// The head of a two-input task; `second_input_[gate]` says which input a gate feeds.
  serialized_two_input* two_input_ = nullptr;
  std::vector<bool> second_input_;
  std::size_t current_gate_ = 0;
  /// The input gates (none for a source), from before_invoke on.
  std::unique_ptr<network::task_inputs> inputs_;
  /// Per gate, per channel.
  std::vector<std::vector<network::record_deserializer>> deserializers_;
  network::record_deserializer* current_ = nullptr;

  phase phase_ = phase::created;
  bool has_work_ = true;
  /// The TaskExecutor's figures of this task (null: not reported), and which operators of the
  /// chain count on their own; published once per step.
  std::shared_ptr<metrics::task_io_metrics> io_;
  std::vector<std::pair<const stream_operator*, metrics::operator_io*>> counted_operators_;
  bool waits_for_output_ = false;
  bool yield_ = false;
  /// The task's interrupt flag (task_context::interrupt_flag): raised from another thread when a
  /// cancel or fail mail is on its way; a step stops between two records then.
  const std::atomic<bool>* interrupt_ = nullptr;
  /// The time a step may process records for (besides records_per_step): mail gets its turn.
  step_budget budget_;
  bool canceled_ = false;
  bool closed_ = false;
  std::int64_t buffer_timeout_ms_ = 100;
  bool timer_armed_ = false;
  std::uint64_t timer_id_ = 0;

  // -- time ---------------------------------------------------------------------------------------
  /// The timestamp of the record going through the chain.
  element_time time_;
  /// Operators' processing-time callbacks; the actor's timer wakes the task for the earliest.
  std::unique_ptr<queued_processing_time_service> processing_time_;
  std::optional<std::int64_t> processing_timer_at_;
  std::uint64_t processing_timer_id_ = 0;
  /// The input watermark over every input channel (none for a source task).
  std::optional<status_watermark_valve> valve_;
  std::vector<std::size_t> gate_offsets_;
  /// The channel last published as holding the input watermark back, and at which watermark.
  std::optional<std::size_t> published_holder_;
  std::int64_t published_holder_watermark_ = min_watermark;
  std::vector<std::unique_ptr<watermark_forwarder>> forwarders_;
  /// A stop-with-savepoint without drain (Flink's StopMode.NO_DRAIN) reached this task: event
  /// time must not run to the end (windows and timers stay in the savepoint), and its consumers
  /// are told so before its partitions end.
  bool stopping_without_drain_ = false;
  /// The next stop is a drain: the maximum watermark goes out before its barrier.
  bool drain_on_stop_ = false;

  // -- checkpoints ------------------------------------------------------------------------------
  std::unique_ptr<snapshot_uploader> uploader_;
  /// The checkpoints being written: their figures so far and when their async part began.
  std::map<std::int64_t, std::pair<state::checkpoint_metrics, std::chrono::steady_clock::time_point>>
    uploading_;
  /// Every input ended (the operators finished): snapshots say "finished".
  bool input_ended_ = false;
  /// The restored checkpoint had this task finished: it emits nothing and waits for nothing.
  bool restored_finished_ = false;
  /// A trigger that came before the input ended (its producers finished, their end-of-partition
  /// on its way): taken when the input ends.
  std::optional<network::checkpoint_barrier> deferred_trigger_;
  /// The first checkpoint taken after the input ended: its completion, or a later one's, lets
  /// the task finish.
  std::optional<std::int64_t> final_checkpoint_;
};

} // namespace flint::streaming
