#pragma once
/// Samples in Prometheus' text exposition format 0.0.4, named as Flink's PrometheusReporter
/// names them: "flink_" + scope + "_" + metric name, every character outside [a-zA-Z0-9_:]
/// turned into "_" (`taskmanager.job.task` + `buffers.inPoolUsage` →
/// `flink_taskmanager_job_task_buffers_inPoolUsage`), the scope's variables as labels. Every
/// metric is a gauge, as Flink reports counters. Label values are filtered as Flink's reporter
/// does by default (`filterLabelValueCharacters: true`): every character outside [a-zA-Z0-9:_]
/// becomes "_" (`task_name="Source:_numbers"`), so dashboards built for Flink's series match.

#include <string>
#include <vector>

#include "runtime/metrics/metric_registry.hpp"

namespace flint::metrics {

inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

/// How label values are written (Flink's `metrics.reporter.<name>.filterLabelValueCharacters`).
struct text_options {
  /// Replace every character outside [a-zA-Z0-9:_] with "_" (Flink's default); false: keep them,
  /// escaping only what the format needs (backslash, double quote, newline).
  bool filter_label_values = true;
};

std::string prometheus_name(const std::string& scope, const std::string& name);
std::string to_prometheus_text(const std::vector<sample>& samples, const text_options& options = {});

} // namespace flint::metrics
