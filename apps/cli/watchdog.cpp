#include "apps/cli/watchdog.hpp"

#include <cstdio>
#include <cstdlib>

namespace flint::cli {

watchdog::watchdog(std::chrono::nanoseconds limit, std::string message) {
  thread_ = std::thread([this, limit, message = std::move(message)] {
    std::unique_lock<std::mutex> lock(mtx_);
    if (cv_.wait_for(lock, limit, [this] { return done_; }))
      return;
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    // The blocked step holds runtime threads that would not stop: leave at once.
    std::_Exit(1);
  });
}

watchdog::~watchdog() {
  {
    std::lock_guard<std::mutex> lock(mtx_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

} // namespace flint::cli
