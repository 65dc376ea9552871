#include "runtime/metrics/task_io_metrics.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "runtime/metrics/meter_view.hpp"

namespace flint::metrics {

namespace {

std::int64_t ns_of(task_io_metrics::clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

} // namespace

void task_io_metrics::step_began(clock::time_point now) {
  auto since = waiting_since_.exchange(0, std::memory_order_relaxed);
  if (since != 0) {
    auto waited = ns_of(now) - since;
    if (waiting_for_.load(std::memory_order_relaxed)
        == static_cast<std::uint8_t>(wait_reason::backpressured))
      backpressured_ns_.fetch_add(waited, std::memory_order_relaxed);
    else
      idle_ns_.fetch_add(waited, std::memory_order_relaxed);
  }
  step_start_ = now;
}

void task_io_metrics::step_ended(clock::time_point now, bool waits, wait_reason why) {
  busy_ns_.fetch_add(ns_of(now) - ns_of(step_start_), std::memory_order_relaxed);
  if (waits) {
    waiting_for_.store(static_cast<std::uint8_t>(why), std::memory_order_relaxed);
    waiting_since_.store(ns_of(now), std::memory_order_relaxed);
  }
}

task_io_metrics::totals task_io_metrics::totals_at(clock::time_point now) const {
  totals t{busy_ns_.load(std::memory_order_relaxed), idle_ns_.load(std::memory_order_relaxed),
           backpressured_ns_.load(std::memory_order_relaxed)};
  auto since = waiting_since_.load(std::memory_order_relaxed);
  if (since != 0 && ns_of(now) > since) {
    auto waited = ns_of(now) - since;
    if (waiting_for_.load(std::memory_order_relaxed)
        == static_cast<std::uint8_t>(wait_reason::backpressured))
      t.backpressured_ns += waited;
    else
      t.idle_ns += waited;
  }
  return t;
}

bool task_io_metrics::back_pressured_now() const {
  return waiting_since_.load(std::memory_order_relaxed) != 0
    && waiting_for_.load(std::memory_order_relaxed)
    == static_cast<std::uint8_t>(wait_reason::backpressured);
}

task_io_metrics::per_second task_io_metrics::time_per_second(clock::time_point now) {
  std::lock_guard<std::mutex> lock(window_mtx_);
  if (window_start_ == clock::time_point{}) {
    window_start_ = now;
    window_totals_ = totals_at(now);
    return latest_;
  }
  auto elapsed = now - window_start_;
  if (elapsed < std::chrono::seconds(1))
    return latest_;
  auto t = totals_at(now);
  auto span_ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  auto rate = [&](std::int64_t a, std::int64_t b) {
    // ms per second: the share of the window, times 1000; at most 1000 (a wait still counted).
    auto v = static_cast<double>(a - b) / span_ns * 1000.0;
    return v < 0 ? 0.0 : (v > 1000.0 ? 1000.0 : v);
  };
  latest_ = per_second{rate(t.busy_ns, window_totals_.busy_ns), rate(t.idle_ns, window_totals_.idle_ns),
                       rate(t.backpressured_ns, window_totals_.backpressured_ns)};
  window_start_ = now;
  window_totals_ = t;
  return latest_;
}

operator_io& task_io_metrics::add_operator(const std::string& name, const std::string& id) {
  operators_.push_back(std::make_unique<operator_io>());
  operators_.back()->name = name;
  operators_.back()->id = id;
  return *operators_.back();
}

std::string task_scope::vertex_name() const {
  // The deployment descriptor names the task as Flink's taskNameWithSubtask, "Map (1/2)"; Flink's
  // task_name variable is the vertex's name alone (TaskInformation#getTaskName), so that one
  // series per subtask shares it.
  const std::string marker = " (" + std::to_string(subtask_index + 1) + "/";
  auto at = task_name.rfind(marker);
  if (at == std::string::npos || task_name.back() != ')')
    return task_name;
  auto digits = std::string_view(task_name).substr(at + marker.size());
  digits.remove_suffix(1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return task_name;
  return task_name.substr(0, at);
}

variables task_scope::vars() const {
  return {{"host", host},
          {"tm_id", tm_id},
          {"job_id", job_id},
          {"job_name", job_name},
          {"task_id", task_id},
          {"task_attempt_id", task_attempt_id},
          {"task_name", vertex_name()},
          {"task_attempt_num", std::to_string(attempt_number)},
          {"subtask_index", std::to_string(subtask_index)}};
}

collector task_collector(task_scope scope, const std::shared_ptr<task_io_metrics>& task_io) {
  // Flink's meters beside their counters; reporters may read from several threads.
  struct meters {
    std::mutex mtx;
    meter_view records_in, records_out, bytes_in, bytes_out;
    std::map<const operator_io*, std::pair<meter_view, meter_view>> operators;
  };
  auto views = std::make_shared<meters>();
  return [scope = std::move(scope), weak = std::weak_ptr<task_io_metrics>(task_io),
          views](std::vector<sample>& out) {
    auto io = weak.lock();
    if (!io)
      return; // the task ended
    const std::string task = "taskmanager.job.task";
    auto vars = scope.vars();
    auto add = [&](const char* name, double v) { out.push_back({task, name, vars, v}); };
    auto now = task_io_metrics::clock::now();
    auto records_in = io->records_in.load(std::memory_order_relaxed);
    auto records_out = io->records_out.load(std::memory_order_relaxed);
    auto bytes_in = io->bytes_in_local.load(std::memory_order_relaxed)
      + io->bytes_in_remote.load(std::memory_order_relaxed);
    auto bytes_out = io->bytes_out.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(views->mtx);
    add("numRecordsIn", static_cast<double>(records_in));
    add("numRecordsOut", static_cast<double>(records_out));
    add("numRecordsInPerSecond", views->records_in.rate(now, records_in));
    add("numRecordsOutPerSecond", views->records_out.rate(now, records_out));
    add("numBytesInLocal", static_cast<double>(io->bytes_in_local.load(std::memory_order_relaxed)));
    add("numBytesInRemote", static_cast<double>(io->bytes_in_remote.load(std::memory_order_relaxed)));
    add("numBytesIn", static_cast<double>(bytes_in));
    add("numBytesInPerSecond", views->bytes_in.rate(now, bytes_in));
    add("numBytesOut", static_cast<double>(bytes_out));
    add("numBytesOutPerSecond", views->bytes_out.rate(now, bytes_out));
    add("numBuffersOut", static_cast<double>(io->buffers_out.load(std::memory_order_relaxed)));
    add("buffers.inPoolUsage", io->in_pool_usage.load(std::memory_order_relaxed));
    add("buffers.outPoolUsage", io->out_pool_usage.load(std::memory_order_relaxed));
    add("isBackPressured", io->back_pressured_now() ? 1.0 : 0.0);
    add("currentInputWatermark",
        static_cast<double>(io->current_input_watermark.load(std::memory_order_relaxed)));
    add("currentOutputWatermark",
        static_cast<double>(io->current_output_watermark.load(std::memory_order_relaxed)));
    add("numLateRecordsDropped",
        static_cast<double>(io->late_records_dropped.load(std::memory_order_relaxed)));
    add("checkpointAlignmentTime", static_cast<double>(io->alignment_time_nanos(now)));
    add("checkpointStartDelayNanos",
        static_cast<double>(io->checkpoint_start_delay_nanos.load(std::memory_order_relaxed)));
    auto t = io->time_per_second(now);
    add("busyTimeMsPerSecond", t.busy_ms);
    add("idleTimeMsPerSecond", t.idle_ms);
    add("backPressuredTimeMsPerSecond", t.backpressured_ms);
    for (const auto& op : io->operators()) {
      auto op_vars = vars;
      op_vars.emplace_back("operator_id", op->id);
      op_vars.emplace_back("operator_name", op->name);
      auto in = op->records_in.load(std::memory_order_relaxed);
      auto out_count = op->records_out.load(std::memory_order_relaxed);
      auto& [in_view, out_view] = views->operators[op.get()];
      const auto operator_scope = task + ".operator";
      out.push_back({operator_scope, "numRecordsIn", op_vars, static_cast<double>(in)});
      out.push_back({operator_scope, "numRecordsOut", op_vars, static_cast<double>(out_count)});
      out.push_back({operator_scope, "numRecordsInPerSecond", op_vars, in_view.rate(now, in)});
      out.push_back(
        {operator_scope, "numRecordsOutPerSecond", op_vars, out_view.rate(now, out_count)});
    }
  };
}

std::int64_t task_io_metrics::alignment_time_nanos(clock::time_point now) const {
  auto started = checkpoint_alignment_started_nanos.load(std::memory_order_relaxed);
  if (started == 0)
    return checkpoint_alignment_time.load(std::memory_order_relaxed);
  auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(now_ns) - started);
}

} // namespace flint::metrics
