#include "runtime/rest/savepoint_operations.hpp"

#include <vector>

namespace flint::rest {

savepoint_operations::~savepoint_operations() {
  stop();
}

expected<unit> savepoint_operations::trigger(const graph::job_id& job, const std::string& trigger,
                                             savepoint_fn take) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_)
    return make_error(errc::unreachable, "The REST endpoint is shutting down.");
  reap_waiters();
  if (auto pending = waiters_.find(job); pending != waiters_.end())
    return make_error(errc::illegal_state,
                      "A savepoint of job " + job.to_string() + " is already in progress (trigger id "
                        + pending->second.trigger + "); wait for it (GET /jobs/" + job.to_string()
                        + "/savepoints/" + pending->second.trigger
                        + ") before triggering another.");
  operations_[trigger] = operation{job, {}};
  auto& w = waiters_[job];
  w.trigger = trigger;
  // The thread cannot record its result before this function returns: that takes `mutex_`.
  w.thread = std::thread([this, job, trigger, take = std::move(take)] {
    auto path = take();
    std::lock_guard<std::mutex> lock(mutex_);
    auto& state = operations_[trigger].state;
    state.done = true;
    if (path)
      state.location = *path;
    else
      state.failure = path.error().message;
    completed_.push_back(trigger);
    while (completed_.size() > kept_results_) {
      operations_.erase(completed_.front());
      completed_.pop_front();
    }
    waiters_[job].done = true;
  });
  return unit{};
}

std::optional<savepoint_operations::result> savepoint_operations::find(const graph::job_id& job,
                                                                        const std::string& trigger) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto i = operations_.find(trigger);
  if (i == operations_.end() || i->second.job != job)
    return std::nullopt;
  return i->second.state;
}

void savepoint_operations::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    for (auto& [job, w] : waiters_)
      threads.push_back(std::move(w.thread));
  }
  // Without the lock: a waiter takes it to record its result.
  for (auto& t : threads)
    if (t.joinable())
      t.join();
  std::lock_guard<std::mutex> lock(mutex_);
  waiters_.clear();
}

void savepoint_operations::reap_waiters() {
  for (auto i = waiters_.begin(); i != waiters_.end();) {
    if (!i->second.done) {
      ++i;
      continue;
    }
    if (i->second.thread.joinable())
      i->second.thread.join();
    i = waiters_.erase(i);
  }
}

} // namespace flint::rest
