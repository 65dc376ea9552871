#pragma once
/// A last-resort bound on a blocking step the runtime cannot bound itself (CAF 0.17's
/// `remote_actor` connects without a timeout; a SYN to a dead host waits minutes): if the step
/// is still running at the deadline, the message goes to stderr and the process exits with 1.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace flint::cli {

class watchdog {
public:
  /// Starts watching; `message` is printed if `limit` passes before the watchdog is destroyed.
  watchdog(std::chrono::nanoseconds limit, std::string message);
  ~watchdog();
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

} // namespace flint::cli
