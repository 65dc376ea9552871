#pragma once
/// Flink's metric reporters, `metrics.reporter.<name>.*` under any name (Flink's
/// ReporterSetup): a reporter is configured by its `factory.class`; `metrics.reporters`, when
/// set, lists the names to start. Flint has one reporter, Flink's PrometheusReporter.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::config {

/// The factory class naming Flink's PrometheusReporter.
inline constexpr const char* prometheus_reporter_factory =
  "org.apache.flink.metrics.prometheus.PrometheusReporterFactory";

/// The Prometheus reporter's settings, from `metrics.reporter.<name>.*`.
struct prometheus_reporter_settings {
  std::string name;
  /// `port`: a port, a range ("9250-9260") or 0 (default 9249).
  std::string port = "9249";
  /// `filterLabelValueCharacters` (default true): label values reduced to [a-zA-Z0-9:_].
  bool filter_label_values = true;
};

struct metric_reporters {
  /// The Prometheus reporter to start, if one is configured.
  std::optional<prometheus_reporter_settings> prometheus;
  /// Reporters that will not start, and why, in Flink's words where it has them.
  std::vector<std::string> warnings;
};

/// Reads every `metrics.reporter.<name>.factory.class`. A factory other than Prometheus' is
/// a warning (the node runs on, as Flink's does after "Could not instantiate metrics reporter");
/// a bad port or filterLabelValueCharacters value of the reporter that starts is an error.
expected<metric_reporters> read_metric_reporters(const configuration& cfg);

/// Whether `key` is a reporter key Flint reads (`metrics.reporters`,
/// `metrics.reporter.<name>.{factory.class,port,filterLabelValueCharacters}`).
bool is_metric_reporter_key(std::string_view key);

} // namespace flint::config
