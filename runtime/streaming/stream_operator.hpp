#pragma once
/// The lifecycle every runtime operator shares (Flink's StreamOperator), small enough for the
/// graph layer's operator factories to name as their product.

#include "runtime/state/operator_snapshot.hpp"

#include <cstdint>
#include <limits>

namespace flint::streaming {

struct operator_context;

/// Where an operator's watermarks and watermark status go: the operators chained to it and its
/// record writers (the chain builder makes one per operator; the task owns them).
class watermark_forwarder {
public:
  virtual ~watermark_forwarder() = default;
  virtual void emit_watermark(std::int64_t watermark) = 0;
  virtual void emit_watermark_status(bool idle) = 0;
};

/// One operator of a task's chain. The task opens the chain tail first, calls `finish` head
/// first once every input ended, and closes it at the end, on the task's thread only.
class stream_operator {
public:
  virtual ~stream_operator() = default;
  /// Before the first record (files, sockets, state).
  virtual void open() {}
  /// Every input has ended (Flink's endInput + finish): emit what is held back.
  virtual void finish() {}
  /// After the task's last step; also on failure and cancellation.
  virtual void close() {}
  /// The task ends a mailbox turn: a chance to hand buffered output on (print sinks).
  virtual void end_of_batch() {}

  // -- event time (Flink's processWatermark / processWatermarkStatus) --------------------------

  /// Every record before `watermark` is processed: an operator with event-time timers fires them
  /// (emitting what they trigger), then forwards the watermark. Watermarks only rise.
  virtual void process_watermark(std::int64_t watermark) { emit_watermark(watermark); }
  /// The input went idle (true) or active again (false).
  virtual void process_watermark_status(bool idle) { emit_watermark_status(idle); }
  void set_watermark_forwarder(watermark_forwarder* forwarder) noexcept { forwarder_ = forwarder; }
  /// The last watermark this operator emitted (Flink's currentOutputWatermark).
  std::int64_t current_output_watermark() const noexcept { return output_watermark_; }
  /// Records dropped for coming after their window's lateness (Flink's numLateRecordsDropped);
  /// -1 for an operator that drops none.
  virtual std::int64_t late_records_dropped() const noexcept { return -1; }

  // -- checkpoints (Flink's StreamOperatorStateHandler and CheckpointListener) ------------------

  /// Before `open`, when the task is restored: the state this subtask starts from.
  virtual void initialize_state(const state::operator_state_restore& restore) { (void)restore; }
  /// At checkpoint `checkpoint_id`'s barrier, before any operator of the chain is snapshotted
  /// and before the barrier goes downstream (Flink's prepareSnapshotPreBarrier): the last chance
  /// to emit records that belong before the barrier. The task calls it on every operator of the
  /// chain head first, so what one emits reaches the operators after it before their turn. An
  /// operator that pre-aggregates (LocalWindowAggregate) emits everything it holds here and so
  /// has no state to snapshot.
  virtual void prepare_snapshot_pre_barrier(std::int64_t checkpoint_id) { (void)checkpoint_id; }
  /// At checkpoint `checkpoint_id`'s barrier, with every record before it processed: a copy of
  /// the state (the task writes it out off its thread).
  virtual state::operator_snapshot snapshot_state(std::int64_t checkpoint_id) {
    (void)checkpoint_id;
    return {};
  }
  virtual void notify_checkpoint_complete(std::int64_t checkpoint_id) { (void)checkpoint_id; }
  virtual void notify_checkpoint_aborted(std::int64_t checkpoint_id) { (void)checkpoint_id; }
  /// True while a sink that makes its output visible only when a checkpoint completes (two-phase
  /// commit) holds output not committed yet: its task, once its input ended, waits for a
  /// checkpoint to complete before it finishes (Flink's final checkpoint, FLIP-147).
  virtual bool awaits_commit() const { return false; }

  // -- Flink's operator-scope numRecordsIn / numRecordsOut -----------------------------------

  /// Records a source emitted and a sink took in, counted by those operators themselves (one
  /// add per record; the task publishes them once per step); -1 for an operator that does not
  /// count (the task's own figures cover the chain's inner operators).
  std::int64_t records_in_counted() const noexcept { return records_in_; }
  std::int64_t records_out_counted() const noexcept { return records_out_; }

protected:
  void emit_watermark(std::int64_t watermark) {
    if (watermark <= output_watermark_)
      return;
    output_watermark_ = watermark;
    if (forwarder_)
      forwarder_->emit_watermark(watermark);
  }
  void emit_watermark_status(bool idle) {
    if (forwarder_)
      forwarder_->emit_watermark_status(idle);
  }

  std::int64_t records_in_ = -1;
  std::int64_t records_out_ = -1;

private:
  watermark_forwarder* forwarder_ = nullptr;
  std::int64_t output_watermark_ = std::numeric_limits<std::int64_t>::min();
};

} // namespace flint::streaming
