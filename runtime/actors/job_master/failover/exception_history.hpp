#pragma once
/// The failures a job went through, newest first and bounded by `web.exception-history-size`
/// (Flink's exception history behind the REST "exceptions" endpoint), with the job's restart
/// and failure counts (Flink's numberOfRestarts and the total behind the history).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include "runtime/common/expected.hpp"
#include "runtime/config/configuration.hpp"

namespace flint::job_master::failover {

/// One failure (Flink's RootExceptionHistoryEntry, without the concurrent ones).
struct exception_entry {
  /// Milliseconds since the epoch, from the caller's clock.
  std::int64_t timestamp = 0;
  /// The failing task with its subtask ("Map (1/2)"); empty for a global failure.
  std::string task_name;
  /// Where the task ran, the TaskManager location text; may be empty.
  std::string location;
  /// The root cause, as text.
  std::string root_cause;
  /// A failure of the whole job rather than of one task.
  bool global = false;

  friend bool operator==(const exception_entry&, const exception_entry&) = default;
};

class exception_history {
public:
  /// Flink's default of `web.exception-history-size`.
  static constexpr std::size_t default_max_size = 16;

  /// Keeps the newest `max_size` entries (0 keeps none but still counts).
  explicit exception_history(std::size_t max_size = default_max_size) : max_size_(max_size) {}

  /// Records a failure as the newest entry, dropping the oldest beyond the bound.
  void add(exception_entry entry);
  /// Newest first.
  const std::deque<exception_entry>& entries() const noexcept { return entries_; }
  std::size_t max_size() const noexcept { return max_size_; }
  /// Failures ever added, including those dropped from `entries()`.
  std::uint64_t failures() const noexcept { return failures_; }

  /// Counts one restart of the job's tasks.
  void record_restart() noexcept { ++restarts_; }
  /// Flink's numberOfRestarts.
  std::uint64_t restarts() const noexcept { return restarts_; }

private:
  std::size_t max_size_;
  std::deque<exception_entry> entries_;
  std::uint64_t failures_ = 0;
  std::uint64_t restarts_ = 0;
};

/// Reads `web.exception-history-size` (default 16); a negative or malformed value is
/// errc::invalid_argument naming the key and the value.
expected<std::size_t> exception_history_size(const config::configuration& config);

} // namespace flint::job_master::failover
