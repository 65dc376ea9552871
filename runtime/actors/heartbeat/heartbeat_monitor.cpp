#include "runtime/actors/heartbeat/heartbeat_monitor.hpp"

namespace flint::heartbeat {

std::shared_ptr<heartbeat_monitor> heartbeat_monitor::start(
  resource_id id, heartbeat_target target, std::shared_ptr<main_thread_executor> executor,
  heartbeat_listener& listener, std::chrono::nanoseconds timeout, int rpc_failure_threshold) {
  auto monitor = std::make_shared<heartbeat_monitor>(passkey{}, std::move(id), std::move(target),
                                                     std::move(executor), listener, timeout,
                                                     rpc_failure_threshold);
  // Arming needs a weak_ptr to the monitor, which the constructor cannot hand out.
  monitor->arm();
  return monitor;
}

heartbeat_monitor::heartbeat_monitor(passkey, resource_id id, heartbeat_target target,
                                     std::shared_ptr<main_thread_executor> executor,
                                     heartbeat_listener& listener, std::chrono::nanoseconds timeout,
                                     int rpc_failure_threshold)
  : id_(std::move(id)),
    target_(std::move(target)),
    executor_(std::move(executor)),
    listener_(listener),
    timeout_(timeout),
    rpc_failure_threshold_(rpc_failure_threshold) {}

void heartbeat_monitor::report_heartbeat() {
  last_heartbeat_ = executor_->now();
  if (state_ == state::running)
    arm();
}

void heartbeat_monitor::report_rpc_success() {
  failed_rpcs_ = 0;
}

void heartbeat_monitor::report_rpc_failure() {
  ++failed_rpcs_;
  if (rpc_failure_threshold_ <= 0 || failed_rpcs_ < rpc_failure_threshold_
      || state_ != state::running)
    return;
  state_ = state::unreachable;
  ++generation_; // the pending timeout must not report a second time
  // The listener may unmonitor (and so release) this monitor: keep it alive for the call.
  auto keep = shared_from_this();
  listener_.notify_target_unreachable(id_);
}

void heartbeat_monitor::cancel() {
  if (state_ != state::running)
    return;
  state_ = state::canceled;
  ++generation_;
}

void heartbeat_monitor::arm() {
  auto generation = ++generation_;
  executor_->schedule(
    [weak = weak_from_this(), generation] {
      if (auto self = weak.lock())
        self->on_timeout(generation);
    },
    timeout_);
}

void heartbeat_monitor::on_timeout(std::uint64_t generation) {
  if (generation != generation_ || state_ != state::running)
    return; // a stale timer: a heartbeat re-armed the monitor since
  state_ = state::timed_out;
  auto keep = shared_from_this();
  listener_.notify_heartbeat_timeout(id_);
}

const char* to_string(heartbeat_monitor::state s) {
  switch (s) {
    case heartbeat_monitor::state::running: return "running";
    case heartbeat_monitor::state::timed_out: return "timed_out";
    case heartbeat_monitor::state::unreachable: return "unreachable";
    case heartbeat_monitor::state::canceled: return "canceled";
  }
  return "?";
}

} // namespace flint::heartbeat
