#pragma once
/// Savepoints asked through REST, as Flink's SavepointHandlers run them: a trigger answers at once
/// with a trigger id, the savepoint runs on, and its result is read by that id (Flink's
/// asynchronous operations and their CompletedOperationCache). At most one savepoint per job is
/// pending; the one thread that waits for it ends with it, so that no number of requests can hold
/// more threads than there are jobs. No HTTP and no CAF here.

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "runtime/common/expected.hpp"
#include "runtime/graph/ids.hpp"

namespace flint::rest {

class savepoint_operations {
public:
  /// Takes the savepoint: its path, or why not. Blocks as long as the savepoint takes.
  using savepoint_fn = std::function<expected<std::string>()>;

  struct result {
    bool done = false;
    /// Set once done and successful.
    std::string location;
    /// Set once done and failed.
    std::string failure;
  };

  /// Completed results are kept for reading, the newest `kept_results` of them (Flink keeps them
  /// for rest.async.store-duration).
  explicit savepoint_operations(std::size_t kept_results = 1024) : kept_results_(kept_results) {}
  ~savepoint_operations();
  savepoint_operations(const savepoint_operations&) = delete;
  savepoint_operations& operator=(const savepoint_operations&) = delete;

  /// Runs `take` on a thread of its own as `job`'s pending savepoint, known as `trigger`.
  /// errc::illegal_state while the job's previous savepoint is pending (the message names its
  /// trigger id); errc::unreachable once stopped.
  expected<unit> trigger(const graph::job_id& job, const std::string& trigger, savepoint_fn take);

  /// The operation `trigger` of `job`; nullopt for none (or one forgotten).
  std::optional<result> find(const graph::job_id& job, const std::string& trigger);

  /// Refuses new savepoints and waits for the pending ones. Idempotent.
  void stop();

private:
  struct operation {
    graph::job_id job;
    result state;
  };
  /// The thread that waits for a job's pending savepoint; joined by the next trigger or stop().
  struct waiter {
    std::string trigger;
    std::thread thread;
    bool done = false;
  };

  /// Joins the waiters whose savepoint is done (each has only its return left). Under `mutex_`.
  void reap_waiters();

  const std::size_t kept_results_;
  std::mutex mutex_;
  bool stopped_ = false;
  std::map<std::string, operation> operations_;
  /// Completed trigger ids, oldest first: the order in which results are forgotten.
  std::deque<std::string> completed_;
  std::map<graph::job_id, waiter> waiters_;
};

} // namespace flint::rest
