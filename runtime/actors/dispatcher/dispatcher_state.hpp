#pragma once
/// The Dispatcher's bookkeeping without actors (Flink's Dispatcher job maps and its in-memory
/// ExecutionGraphInfoStore): which jobs run, which have ended and how.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/actors/dispatcher/dispatcher_gateway.hpp"
#include "runtime/common/expected.hpp"

namespace flint::dispatcher {

class dispatcher_state {
public:
  /// Registers a submitted job; refuses a job id that runs or has run, and invalid graphs.
  expected<unit> add_job(const graph::job_graph& job, std::int64_t now_ms);

  bool is_running(const graph::job_id& id) const { return running_.count(id) > 0; }
  bool is_archived(const graph::job_id& id) const { return archive_.count(id) > 0; }

  /// Moves a running job to the archive with its result.
  expected<unit> finish_job(const graph::job_id& id, graph::job_status status,
                            std::string failure_cause, std::int64_t now_ms);
  /// Keeps an archived job's exception history and restarts for `request_job_status`.
  void set_final_report(const graph::job_id& id, job_master::job_status_response report);
  /// The final status report of an archived job (status, history, restarts).
  std::optional<job_master::job_status_response> final_report(const graph::job_id& id) const;

  /// Details of a running job (status as last known) or an archived one.
  std::optional<job_details> details(const graph::job_id& id) const;
  std::optional<job_result> result(const graph::job_id& id) const;

  /// Archives a job this Dispatcher did not run: one whose stored graph is unreadable (FAILED),
  /// or one a former leader finished whose cleanup it left (Flink's CleanupJobManagerRunner).
  void archive_result(const graph::job_id& id, std::string name, graph::job_status status,
                      std::string cause, std::int64_t net_runtime_ms, std::int64_t now_ms);

  /// Forgets a running job without archiving it: leadership was lost, and the next leader
  /// recovers it.
  void suspend_job(const graph::job_id& id);

  /// Updates the last known status of a running job.
  void set_status(const graph::job_id& id, graph::job_status status);

  std::vector<graph::job_id> running_jobs() const;
  /// Running jobs first, then archived ones, each in submission order.
  job_list list() const;

private:
  struct archived {
    job_details details;
    job_result result;
    job_master::job_status_response report;
  };
  std::map<graph::job_id, job_details> running_;
  std::map<graph::job_id, archived> archive_;
  std::vector<graph::job_id> order_;
};

} // namespace flint::dispatcher
