#pragma once
/// How heartbeat components run code later in their owner's main thread and read its time
/// (Flink's ScheduledExecutor for the main thread). Endpoints use `endpoint_executor`; unit
/// tests use a manual executor. Scheduled work cannot be cancelled: callers ignore stale runs.

#include <chrono>
#include <functional>

namespace flint::heartbeat {

using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;

class main_thread_executor {
public:
  virtual ~main_thread_executor() = default;

  /// Runs `f` in the main thread after the work already queued.
  virtual void execute(std::function<void()> f) = 0;

  /// Runs `f` in the main thread after `delay` of the executor's clock.
  virtual void schedule(std::function<void()> f, std::chrono::nanoseconds delay) = 0;

  /// The executor's clock (the actor system's clock for endpoints: manual in tests).
  virtual time_point now() const = 0;

  /// Throws std::logic_error when called outside the main thread; a no-op where there is none.
  virtual void validate_main_thread() const {}
};

} // namespace flint::heartbeat
