#pragma once
/// A node's process figures under Flink's `Status` group (Flink's MetricUtils
/// instantiateStatusMetrics, whose JVM figures a C++ process has as plain process figures):
/// `Status.JVM.CPU.Load` (the process's share of all CPUs since the previous read, 0..1, as
/// OperatingSystemMXBean.getProcessCpuLoad), `Status.JVM.CPU.Time` (CPU time used, ns),
/// `Status.JVM.Threads.Count`, and `Status.ProcessTree.Memory.RSS` (resident bytes). Read from
/// /proc/self on each collection.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/metrics/metric_registry.hpp"

namespace flint::metrics {

/// What /proc/self/stat and /proc/self/statm say about the process.
struct process_figures {
  std::int64_t cpu_time_ns = 0; ///< user + system time
  std::int64_t threads = 0;
  std::int64_t rss_bytes = 0;
};

/// Parses /proc/<pid>/stat (`ticks_per_second`: sysconf(_SC_CLK_TCK)) and /proc/<pid>/statm
/// (`page_size`: bytes); none when either is malformed.
std::optional<process_figures> parse_proc_figures(std::string_view stat, std::string_view statm,
                                                  std::int64_t ticks_per_second,
                                                  std::int64_t page_size);

/// The CPU load between two readings: CPU time used over wall time times the CPUs, 0..1.
double cpu_load(std::int64_t cpu_ns_before, std::int64_t cpu_ns_now,
                std::chrono::nanoseconds wall, unsigned cpus);

/// The `Status` figures of this process under `scope` ("taskmanager", "jobmanager") with `vars`.
collector process_collector(std::string scope, variables vars);

} // namespace flint::metrics
