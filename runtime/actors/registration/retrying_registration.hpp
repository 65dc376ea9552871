#pragma once
/// Registration that retries until it succeeds or is cancelled (Flink's RetryingRegistration),
/// used by TaskExecutor → ResourceManager, JobMaster → ResourceManager and TaskExecutor →
/// JobMaster. Back-off as in Flink: an attempt that times out is retried at once with twice the
/// timeout (from `cluster.registration.initial-timeout` 100 ms up to
/// `cluster.registration.max-timeout` 30 s); a declined attempt is retried after
/// `cluster.registration.refused-registration-delay` (30 s); any other error after
/// `cluster.registration.error-delay` (10 s).
///
/// Lives in its owner endpoint's main thread; timers go through the owner's schedule_run_async,
/// so the manual clock drives them in tests.

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "runtime/actors/registration/registration_response.hpp"
#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/common/expected.hpp"

namespace flint::registration {

struct retrying_registration_config {
  std::chrono::nanoseconds initial_timeout = std::chrono::milliseconds(100);
  std::chrono::nanoseconds max_timeout = std::chrono::seconds(30);
  std::chrono::nanoseconds error_delay = std::chrono::seconds(10);
  std::chrono::nanoseconds refused_delay = std::chrono::seconds(30);
};

template <class Success>
class retrying_registration {
public:
  using done_fn = std::function<void(expected<registration_response<Success>>)>;
  /// One attempt: ask the target with this timeout and call `done` with its answer.
  using attempt_fn = std::function<void(std::chrono::nanoseconds timeout, done_fn done)>;
  using success_fn = std::function<void(Success)>;

  retrying_registration(rpc::rpc_endpoint& owner, std::string target_name,
                        retrying_registration_config config, attempt_fn attempt,
                        success_fn on_success)
    : state_(std::make_shared<state>(state{owner,
                                           std::move(target_name),
                                           config,
                                           std::move(attempt),
                                           std::move(on_success),
                                           false,
                                           false,
                                           0,
                                           {}})) {}

  ~retrying_registration() { cancel(); }
  retrying_registration(const retrying_registration&) = delete;
  retrying_registration& operator=(const retrying_registration&) = delete;

  /// Makes the first attempt now, with the initial timeout.
  void start() { attempt(state_, state_->config.initial_timeout); }

  /// No attempt starts after this, and a late answer to a running one is ignored.
  void cancel() { state_->canceled = true; }

  bool canceled() const noexcept { return state_->canceled; }
  bool succeeded() const noexcept { return state_->succeeded; }
  /// Attempts made so far.
  int attempts() const noexcept { return state_->attempts; }
  /// The reason of the last failed attempt (empty before any).
  const std::string& last_failure() const noexcept { return state_->last_failure; }

private:
  struct state {
    rpc::rpc_endpoint& owner;
    std::string target_name;
    retrying_registration_config config;
    attempt_fn attempt;
    success_fn on_success;
    bool canceled = false;
    bool succeeded = false;
    int attempts = 0;
    std::string last_failure;
  };

  // Static with a shared state: answers may arrive after the registration object is gone.
  static void attempt(const std::shared_ptr<state>& s, std::chrono::nanoseconds timeout) {
    if (s->canceled || s->succeeded)
      return;
    ++s->attempts;
    s->attempt(timeout, [s, timeout](expected<registration_response<Success>> answer) {
      if (s->canceled || s->succeeded)
        return;
      if (!answer) {
        s->last_failure = answer.error().to_string();
        if (answer.error().code == errc::timeout) {
          attempt(s, std::min(timeout * 2, s->config.max_timeout));
        } else {
          retry_later(s, s->config.error_delay);
        }
        return;
      }
      if (auto* decline = std::get_if<registration_decline>(&*answer)) {
        s->last_failure = "declined: " + decline->reason;
        retry_later(s, s->config.refused_delay);
        return;
      }
      s->succeeded = true;
      s->on_success(std::move(std::get<Success>(*answer)));
    });
  }

  static void retry_later(const std::shared_ptr<state>& s, std::chrono::nanoseconds delay) {
    s->owner.schedule_run_async([s] { attempt(s, s->config.initial_timeout); }, delay);
  }

  std::shared_ptr<state> state_;
};

} // namespace flint::registration
