#include "runtime/actors/heartbeat/endpoint_executor.hpp"

#include <caf/actor_clock.hpp>

#include "runtime/actors/rpc/rpc_endpoint.hpp"

namespace flint::heartbeat {

void endpoint_executor::execute(std::function<void()> f) {
  owner_.run_async(std::move(f));
}

void endpoint_executor::schedule(std::function<void()> f, std::chrono::nanoseconds delay) {
  owner_.schedule_run_async(std::move(f), delay);
}

time_point endpoint_executor::now() const {
  // The actor system's clock, not the wall clock: the test coordinator moves it by hand.
  return owner_.clock().now();
}

void endpoint_executor::validate_main_thread() const {
  owner_.validate_runs_in_main_thread();
}

} // namespace flint::heartbeat
