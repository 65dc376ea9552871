#pragma once
/// `flint trace`: tails a node's message trace live (its "trace" endpoint, polled), filtered by
/// endpoint, method or job, printed as it happens or exported as Chrome trace-event JSON
/// (Perfetto, chrome://tracing) or a Mermaid sequence diagram.

#include <chrono>
#include <optional>
#include <string>

#include "apps/cli/cli_settings.hpp"
#include "apps/trace_tools/trace_filter.hpp"

namespace flint::cli {

struct trace_options {
  trace::record_filter filter;
  /// "", "chrome" or "mermaid".
  std::string export_format;
  std::string export_file;
  /// Keep polling for new records; by default when printing, not when exporting.
  std::optional<bool> follow;
  /// Stop following after this long (Ctrl-C stops it too).
  std::optional<std::chrono::nanoseconds> duration;
  /// Print records as JSON lines (what a trace file holds) instead of text.
  bool json = false;
  /// Keep monitoring records (REST's and the metrics collector's own queries, trace::record's
  /// `monitoring`): hidden by default, as the dashboard's timeline hides them.
  bool monitoring = false;
  /// Pause between polls once the tail has caught up.
  std::chrono::nanoseconds poll_interval = std::chrono::milliseconds(200);
};

int trace_node(const cli_settings& settings, const trace_options& opts);

/// One record as a line of text: time, sequence, direction, caller -> callee, method, kind,
/// size, outcome, latency and detail.
std::string format_record(const trace::record& r);

} // namespace flint::cli
