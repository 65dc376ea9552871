#pragma once
/// Flink's JobResultStore (FLIP-194): what became of each globally terminated job, kept past the
/// JobManager's life, so that a new leader neither runs a finished job again (its JobGraph may
/// still be in the job graph store if cleanup was interrupted) nor forgets to finish its cleanup.
///
/// An entry is created "dirty" when the job reaches a globally terminal state (FINISHED, FAILED,
/// CANCELED) and marked "clean" once its HA data, blobs and checkpoints are gone. On recovery the
/// Dispatcher re-runs cleanup for every dirty entry and skips every job that has an entry.
///
/// Every method may be called from any thread.

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"
#include "runtime/graph/job_status.hpp"

namespace flint::ha {

struct job_result_entry {
  graph::job_id job;
  /// FINISHED, FAILED or CANCELED.
  graph::job_status status = graph::job_status::finished;
  /// Why the job failed (empty unless FAILED).
  std::string failure_cause;
  std::int64_t net_runtime_ms = 0;

  friend bool operator==(const job_result_entry&, const job_result_entry&) = default;
};

class job_result_store {
public:
  virtual ~job_result_store() = default;
  /// The job globally terminated and its cleanup is pending. illegal_state when the job already
  /// has an entry (dirty or clean), as in Flink; invalid_argument for a status that is not
  /// globally terminal.
  virtual expected<unit> create_dirty_result(const job_result_entry& e) = 0;
  /// The job's cleanup is done. Already clean is fine; not_found when the job has no entry.
  virtual expected<unit> mark_result_as_clean(const graph::job_id& job) = 0;
  /// Whether the job has an entry, dirty or clean.
  virtual expected<bool> has_job_result_entry(const graph::job_id& job) = 0;
  /// The dirty entries (cleanup pending), in no particular order.
  virtual expected<std::vector<job_result_entry>> dirty_results() = 0;
};

/// In memory (Flink's EmbeddedJobResultStore): a non-HA cluster forgets everything on restart.
class standalone_job_result_store final : public job_result_store {
public:
  expected<unit> create_dirty_result(const job_result_entry& e) override;
  expected<unit> mark_result_as_clean(const graph::job_id& job) override;
  expected<bool> has_job_result_entry(const graph::job_id& job) override;
  expected<std::vector<job_result_entry>> dirty_results() override;

private:
  struct stored {
    job_result_entry entry;
    bool clean = false;
  };
  std::mutex mutex_;
  std::map<graph::job_id, stored> entries_;
};

/// Flink's FileSystemJobResultStore: one JSON file per job in `dir` (the factory passes
/// `<storageDir>/job-result-store/<cluster-id>`): `<job-id>_DIRTY.json` while cleanup is pending,
/// renamed to `<job-id>.json` when clean. The dirty file is written atomically; the rename is
/// atomic, so a file is always either dirty or clean, never both nor half written.
///
/// File format (Flink's JobResultEntry JSON, "version": 1), with the failure cause as text rather
/// than Flink's serialized throwable and the exact job status added:
///   {"result": {"id": "<32 hex>", "application-status": "SUCCEEDED"|"FAILED"|"CANCELED",
///               "job-status": "FINISHED"|"FAILED"|"CANCELED", "net-runtime": <ms>,
///               "failure-cause": "<text>"},
///    "version": 1}
/// A file that does not parse, lacks a field, or names another job gives malformed_message
/// naming the file.
class file_system_job_result_store final : public job_result_store {
public:
  explicit file_system_job_result_store(std::filesystem::path dir);

  expected<unit> create_dirty_result(const job_result_entry& e) override;
  expected<unit> mark_result_as_clean(const graph::job_id& job) override;
  expected<bool> has_job_result_entry(const graph::job_id& job) override;
  expected<std::vector<job_result_entry>> dirty_results() override;

  /// `<dir>/<job-id>_DIRTY.json`.
  std::filesystem::path dirty_file(const graph::job_id& job) const;
  /// `<dir>/<job-id>.json`.
  std::filesystem::path clean_file(const graph::job_id& job) const;

  /// The JSON text of an entry, and back (for files and tests).
  static std::string to_json(const job_result_entry& e);
  static expected<job_result_entry> from_json(const std::string& text);

private:
  std::filesystem::path dir_;
  /// This process's writers; another process must not share the directory (only the leading
  /// Dispatcher writes, as in Flink).
  std::mutex mutex_;
};

} // namespace flint::ha
