#pragma once
/// Selecting trace records (`flint trace --endpoint/--method/--job`) and naming the process an
/// endpoint runs in.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::trace {

/// Which records to keep; an empty field keeps all.
struct record_filter {
  /// Prefix of the sender or the receiver endpoint id ("task_executor/" keeps every TaskExecutor).
  std::string endpoint;
  /// Exact method name, e.g. "offer_slots".
  std::string method;
  /// A job id, or its leading part: keeps records from or to a job's endpoints
  /// ("job_master/<job id>", "slot_pool/<job id>").
  std::string job;
  std::optional<direction> dir;

  bool matches(const record& r) const;
};

/// The records `f` keeps, in their order.
std::vector<record> filter(std::span<const record> records, const record_filter& f);

/// The process an endpoint runs in, for grouping: "TaskManager <id>" for "task_executor/<id>",
/// "JobManager" for the Dispatcher, ResourceManager, JobMasters and SlotPools, and the id's first
/// path segment for anything else (a CLI client, say).
std::string node_of(std::string_view endpoint_id);

} // namespace flint::trace
