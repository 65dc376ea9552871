#pragma once
/// The asynchronous part of a task's checkpoints (Flink's AsyncCheckpointRunnable): the state
/// copied at the barrier is written to checkpoint storage on a thread of its own while the task
/// goes on processing; the task collects the results on its own thread and acknowledges them.

#include "runtime/common/expected.hpp"
#include "runtime/state/state_handles.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace flint::streaming {

class snapshot_uploader {
public:
  using upload = std::function<expected<state::task_state_snapshot>()>;
  struct result {
    std::int64_t checkpoint_id = 0;
    expected<state::task_state_snapshot> snapshot;
  };

  /// `done` is called from the upload thread after each upload (the task's wake).
  explicit snapshot_uploader(std::function<void()> done);
  /// Waits for the upload in progress; uploads not started are dropped.
  ~snapshot_uploader();
  snapshot_uploader(const snapshot_uploader&) = delete;
  snapshot_uploader& operator=(const snapshot_uploader&) = delete;

  /// Runs `work` after the uploads before it (the thread starts with the first one).
  void submit(std::int64_t checkpoint_id, upload work);
  /// True when results wait (a relaxed load: the task tests it every step).
  bool has_results() const noexcept { return has_results_.load(std::memory_order_acquire); }
  /// The finished uploads, in order.
  std::vector<result> take_results();
  /// Uploads submitted whose results were not taken yet (the task may not end before).
  bool busy() const noexcept { return in_flight_.load(std::memory_order_acquire) > 0; }

private:
  void run();

  std::function<void()> done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<std::int64_t, upload>> queue_;
  std::vector<result> results_;
  std::atomic<bool> has_results_{false};
  std::atomic<std::size_t> in_flight_{0};
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace flint::streaming
