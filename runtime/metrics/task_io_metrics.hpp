#pragma once
/// A task's I/O and time figures (Flink's TaskIOMetricGroup): written by the task's own thread
/// once per mailbox step (a few relaxed stores, never per record), read by any reporter. The
/// "...PerSecond" figures are Flink's TimerGauges: time spent busy, idle (no input) and
/// backpressured (no output buffer) per second of the last window of at least one second.

#include <atomic>
#include <limits>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/metrics/metric_registry.hpp"

namespace flint::metrics {

/// Why a task that has nothing to do waits.
enum class wait_reason : std::uint8_t { idle, backpressured };

/// Counts of one operator of a chain that Flink reports on the operator scope, labelled as
/// Flink's: operator_name and operator_id (the operator's hash in the JobGraph, 32 hex digits).
struct operator_io {
  std::string name;
  std::string id;
  std::atomic<std::int64_t> records_in{0};
  std::atomic<std::int64_t> records_out{0};
};

class task_io_metrics {
public:
  using clock = std::chrono::steady_clock;

  std::atomic<std::int64_t> records_in{0};
  std::atomic<std::int64_t> records_out{0};
  std::atomic<std::int64_t> bytes_in_local{0};
  std::atomic<std::int64_t> bytes_in_remote{0};
  std::atomic<std::int64_t> bytes_out{0};
  std::atomic<std::int64_t> buffers_out{0};
  /// buffers.inPoolUsage: the share of the input buffers in use, 0..1.
  std::atomic<float> in_pool_usage{0};
  /// buffers.outPoolUsage: the share of the output partitions' buffer pools in use, 0..1.
  std::atomic<float> out_pool_usage{0};
  /// Event time (Flink's WatermarkGauges): the task's input watermark (the minimum over its
  /// channels), the watermark its chain last emitted, Long.MIN_VALUE before any; and the records
  /// its window operators dropped as late (numLateRecordsDropped).
  std::atomic<std::int64_t> current_input_watermark{std::numeric_limits<std::int64_t>::min()};
  std::atomic<std::int64_t> current_output_watermark{std::numeric_limits<std::int64_t>::min()};
  std::atomic<std::int64_t> late_records_dropped{0};
  std::atomic<bool> input_idle{false};
  /// Flink's checkpointAlignmentTime and checkpointStartDelayNanos gauges (ns): the last
  /// checkpoint's, written by the task's thread once per checkpoint; 0 before any.
  std::atomic<std::int64_t> checkpoint_alignment_time{0};
  std::atomic<std::int64_t> checkpoint_start_delay_nanos{0};
  /// The steady clock's nanoseconds at which the alignment in progress began, 0 when none (the
  /// task's inputs write it at the first barrier and at the end): a stuck alignment shows in
  /// checkpointAlignmentTime while it lasts, as Flink's getAlignmentDurationNanos.
  std::atomic<std::int64_t> checkpoint_alignment_started_nanos{0};
  /// checkpointAlignmentTime as Flink reads it: the alignment in progress so far, else the last
  /// checkpoint's.
  std::int64_t alignment_time_nanos(clock::time_point now) const;
  /// Which input channel holds the input watermark back (the task's thread writes it when it
  /// changes; reporters read a copy).
  void set_watermark_holder(std::string holder) {
    std::lock_guard<std::mutex> guard{holder_mtx_};
    watermark_holder_ = std::move(holder);
  }
  std::string watermark_holder() const {
    std::lock_guard<std::mutex> guard{holder_mtx_};
    return watermark_holder_;
  }

  /// The task's thread: a step began / ended; after the end, whether and why it waits.
  void step_began(clock::time_point now);
  void step_ended(clock::time_point now, bool waits, wait_reason why);

  struct per_second {
    double busy_ms = 0, idle_ms = 0, backpressured_ms = 0;
  };
  /// The time figures of the latest window (any thread).
  per_second time_per_second(clock::time_point now);

  /// Busy, idle and backpressured nanoseconds so far, counting a wait still going on.
  struct totals {
    std::int64_t busy_ns = 0, idle_ns = 0, backpressured_ns = 0;
  };
  totals totals_at(clock::time_point now) const;
  /// Flink's isBackPressured: the task waits for an output buffer right now.
  bool back_pressured_now() const;

  /// Operators whose counts are reported on their own (the chain's source and sink). Added
  /// before the collector is registered: readers walk the list without a lock.
  operator_io& add_operator(const std::string& name, const std::string& id);
  const std::vector<std::unique_ptr<operator_io>>& operators() const { return operators_; }

private:
  std::atomic<std::int64_t> busy_ns_{0}, idle_ns_{0}, backpressured_ns_{0};
  /// While waiting: since when (ns since the clock's epoch) and why; 0 while running.
  std::atomic<std::int64_t> waiting_since_{0};
  std::atomic<std::uint8_t> waiting_for_{0};
  clock::time_point step_start_{};

  std::mutex window_mtx_;
  clock::time_point window_start_{};
  totals window_totals_{};
  per_second latest_{};

  std::vector<std::unique_ptr<operator_io>> operators_;
  mutable std::mutex holder_mtx_;
  std::string watermark_holder_;
};

/// Flink's task scope variables: host, tm_id, job_id, job_name, task_id, task_attempt_id,
/// task_name, task_attempt_num, subtask_index.
struct task_scope {
  std::string host, tm_id, job_id, job_name, task_id, task_attempt_id, task_name;
  int attempt_number = 0;
  int subtask_index = 0;
  variables vars() const;
  /// task_name without the " (n/N)" of its subtask, as Flink's task_name variable.
  std::string vertex_name() const;
};

/// The task's figures under `taskmanager.job.task` (and `taskmanager.job.task.operator`), while
/// the task holds them: the collector keeps only a weak reference, so once the task and its
/// executor let go of `io` (the task ended) its series leave the node's /metrics, as Flink
/// closes an ended task's metric group.
collector task_collector(task_scope scope, const std::shared_ptr<task_io_metrics>& io);

} // namespace flint::metrics
