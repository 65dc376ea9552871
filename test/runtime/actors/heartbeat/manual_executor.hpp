#pragma once
/// A main-thread executor for plain unit tests: work runs only when the test advances time,
/// each timer exactly at its due time (including timers scheduled while advancing).

#include <deque>
#include <map>

#include "runtime/actors/heartbeat/main_thread_executor.hpp"

namespace flint::heartbeat::test {

class manual_executor final : public main_thread_executor {
public:
  void execute(std::function<void()> f) override { queue_.push_back(std::move(f)); }

  void schedule(std::function<void()> f, std::chrono::nanoseconds delay) override {
    // A multimap keeps timers due at the same time in the order they were scheduled.
    timers_.emplace(now_ + delay, std::move(f));
  }

  time_point now() const override { return now_; }

  /// Time since the executor was created.
  std::chrono::nanoseconds elapsed() const { return now_ - time_point{}; }

  /// Runs the work queued with `execute`.
  void run() {
    while (!queue_.empty()) {
      auto f = std::move(queue_.front());
      queue_.pop_front();
      f();
    }
  }

  /// Moves time forward by `d`, running every timer at its due time.
  void advance(std::chrono::nanoseconds d) {
    auto until = now_ + d;
    run();
    while (!timers_.empty() && timers_.begin()->first <= until) {
      auto i = timers_.begin();
      now_ = i->first;
      auto f = std::move(i->second);
      timers_.erase(i);
      f();
      run();
    }
    now_ = until;
  }

  size_t pending_timers() const { return timers_.size(); }

private:
  time_point now_{};
  std::deque<std::function<void()>> queue_;
  std::multimap<time_point, std::function<void()>> timers_;
};

} // namespace flint::heartbeat::test
