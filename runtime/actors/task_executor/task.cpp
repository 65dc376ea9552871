#include "runtime/actors/task_executor/task.hpp"

#include "runtime/metrics/task_io_metrics.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <exception>

#include <caf/all.hpp>

namespace flint::task_executor {

invokable::~invokable() = default;

namespace {
using init_atom = caf::atom_constant<caf::atom("tsk_init")>;

/// A task with a thread of its own runs it as a batch thread (SCHED_BATCH): a throughput
/// worker that a woken peer does not preempt at once. Tasks of a pipeline wake each other for
/// every few buffers; with the default policy each wake-up preempted the running task, and on
/// 2 cores WordCount at parallelism 2 made 27 000 thread switches instead of 7 000 (10% of its
/// CPU time). Best effort: a refusal leaves the thread as it was.
void run_as_batch_thread() {
#ifdef SCHED_BATCH
  sched_param param{};
  param.sched_priority = 0;
  ::pthread_setschedparam(::pthread_self(), SCHED_BATCH, &param);
#endif
}
} // namespace

/// Holds only a weak address, so wake-ups from other threads after the task ended are dropped.
class task::context final : public task_context {
public:
  context(caf::actor_addr self, task* owner, std::shared_ptr<std::atomic<bool>> interrupt)
    : self_(std::move(self)),
      owner_(owner),
      interrupt_(std::move(interrupt)) {}

  void wake() override {
    if (pending_.exchange(true))
      return;
    if (auto self = caf::actor_cast<caf::actor>(self_))
      caf::anon_send(self, task_wake_atom::value);
  }

  void schedule_timer(std::chrono::milliseconds delay, std::uint64_t id) override {
    if (auto self = caf::actor_cast<caf::actor>(self_))
      caf::delayed_anon_send(self, delay, task_timer_atom::value, id);
  }

  caf::actor actor() const override { return caf::actor_cast<caf::actor>(self_); }

  void monitor(const caf::actor& whom) override {
    if (owner_ && whom)
      owner_->monitor(whom);
  }

  const std::atomic<bool>* interrupt_flag() const override { return interrupt_.get(); }

  void acknowledge_checkpoint(std::int64_t checkpoint_id, state::task_state_snapshot state,
                              const state::checkpoint_metrics& metrics) override {
    if (owner_ && owner_->setup_.acknowledge_checkpoint)
      owner_->setup_.acknowledge_checkpoint(checkpoint_id, std::move(state), metrics);
  }

  void decline_checkpoint(std::int64_t checkpoint_id, const std::string& cause,
                          bool task_not_ready) override {
    if (owner_ && owner_->setup_.decline_checkpoint)
      owner_->setup_.decline_checkpoint(checkpoint_id, cause, task_not_ready);
  }

  void trace(const std::string& what, const std::string& detail) override {
    if (owner_ && owner_->setup_.trace)
      owner_->setup_.trace(what, detail);
  }

  /// The task ended: monitor() does nothing from now on.
  void detach() { owner_ = nullptr; }

  /// The wake mail is being handled: later wake() calls send a new one.
  void clear_pending() { pending_ = false; }

private:
  caf::actor_addr self_;
  /// Used on the task's own thread only, while the task lives.
  task* owner_;
  std::atomic<bool> pending_ = false;
  std::shared_ptr<std::atomic<bool>> interrupt_;
};

task::task(caf::actor_config& cfg, task_setup setup)
  : caf::event_based_actor(cfg),
    setup_(std::move(setup)),
    attempt_(attempt_of(setup_.tdd)) {}

task::~task() = default;

graph::execution_attempt_id task::attempt_of(const graph::task_deployment_descriptor& tdd) {
  return graph::execution_attempt_id{tdd.execution_graph_id, tdd.job_vertex_id, tdd.subtask_index,
                                     tdd.attempt_number};
}

caf::behavior task::make_behavior() {
  report_state(graph::execution_state::deploying);
  if (!setup_.interrupt)
    setup_.interrupt = std::make_shared<std::atomic<bool>>(false);
  context_ = std::make_shared<context>(address(), this, setup_.interrupt);
  set_down_handler([this](caf::down_msg& down) {
    // Only invokables monitor (their transport peers); they decide what a peer's end means.
    auto msg = caf::make_message(std::move(down));
    offer_to_invokable(msg.content());
  });
  set_default_handler(
    [this](caf::scheduled_actor* self, caf::message_view& x) -> caf::result<caf::message> {
      if (offer_to_invokable(x.content()))
        return caf::message{};
      return caf::drop(self, x);
    });
  send(this, init_atom::value);
  return {
    [this](init_atom) { start_invokable(); },
    [this](task_wake_atom) {
      context_->clear_pending();
      if (!step_queued_)
        do_step();
    },
    [this](task_timer_atom, std::uint64_t id) {
      if (state_ != graph::execution_state::running || !invokable_)
        return;
      try {
        invokable_->on_timer(id);
      } catch (const std::exception& e) {
        end_with(graph::execution_state::failed, e.what());
        return;
      } catch (...) {
        end_with(graph::execution_state::failed, "the invokable threw a non-standard exception");
        return;
      }
      queue_step_if_working();
    },
    [this](task_checkpoint_atom, std::int64_t checkpoint_id, std::int64_t timestamp, bool stop,
           bool drain) {
      if (state_ != graph::execution_state::running || !invokable_) {
        decline(checkpoint_id, "Task " + setup_.tdd.task_name + " is not running.", true);
        return;
      }
      try {
        if (stop && drain)
          invokable_->drain_before_stop();
        if (!invokable_->trigger_checkpoint(checkpoint_id, timestamp, stop))
          decline(checkpoint_id, "Task " + setup_.tdd.task_name + " takes no part in checkpoints.",
                  false);
      } catch (const std::exception& e) {
        end_with(graph::execution_state::failed, e.what());
        return;
      }
      queue_step_if_working();
    },
    [this](task_checkpoint_done_atom, std::int64_t checkpoint_id, bool completed) {
      if (state_ != graph::execution_state::running || !invokable_)
        return;
      try {
        if (completed)
          invokable_->notify_checkpoint_complete(checkpoint_id);
        else
          invokable_->notify_checkpoint_aborted(checkpoint_id);
      } catch (const std::exception& e) {
        end_with(graph::execution_state::failed, e.what());
        return;
      }
      queue_step_if_working();
    },
    [this](task_step_atom) {
      step_queued_ = false;
      do_step();
    },
    [this](task_cancel_atom) {
      if (graph::is_terminal(state_))
        return;
      if (invokable_) {
        try {
          invokable_->cancel();
        } catch (const std::exception&) {
          // Cancelling is best effort; the task ends CANCELED either way.
        }
      }
      end_with(graph::execution_state::canceled);
    },
    [this](task_fail_atom, std::string& cause) {
      if (graph::is_terminal(state_))
        return;
      if (invokable_) {
        try {
          invokable_->cancel();
        } catch (const std::exception&) {
        }
      }
      end_with(graph::execution_state::failed, std::move(cause));
    },
  };
}

bool task::offer_to_invokable(caf::type_erased_tuple& content) {
  if (state_ != graph::execution_state::running || !invokable_)
    return false;
  bool taken = false;
  try {
    taken = invokable_->on_message(content);
  } catch (const std::exception& e) {
    end_with(graph::execution_state::failed, e.what());
    return true;
  } catch (...) {
    end_with(graph::execution_state::failed, "the invokable threw a non-standard exception");
    return true;
  }
  if (taken)
    queue_step_if_working();
  return taken;
}

void task::on_exit() {
  invokable_.reset();
  if (context_)
    context_->detach();
  context_.reset();
}

void task::start_invokable() {
  if (graph::is_terminal(state_))
    return;
  if (getf(abstract_actor::is_detached_flag))
    run_as_batch_thread();
  try {
    invokable_ = setup_.invokables ? setup_.invokables(setup_.tdd) : nullptr;
  } catch (const std::exception& e) {
    end_with(graph::execution_state::failed,
             "Could not instantiate the invokable of " + setup_.tdd.task_name + ": " + e.what());
    return;
  } catch (...) {
    end_with(graph::execution_state::failed,
             "Could not instantiate the invokable of " + setup_.tdd.task_name + ".");
    return;
  }
  if (!invokable_) {
    end_with(graph::execution_state::failed,
             "No invokable for task " + setup_.tdd.task_name + " (" + attempt_.to_string() + ").");
    return;
  }
  invokable_->attach(context_);
  if (setup_.io)
    invokable_->bind_metrics(setup_.io);
  report_state(graph::execution_state::initializing);
  report_state(graph::execution_state::running);
  step_queued_ = true;
  send(this, task_step_atom::value);
}

void task::decline(std::int64_t checkpoint_id, const std::string& cause, bool task_not_ready) {
  if (setup_.decline_checkpoint)
    setup_.decline_checkpoint(checkpoint_id, cause, task_not_ready);
}

void task::do_step() {
  if (state_ != graph::execution_state::running || !invokable_)
    return;
  expected<bool> done = false;
  if (setup_.io)
    setup_.io->step_began(metrics::task_io_metrics::clock::now());
  try {
    done = invokable_->step();
  } catch (const std::exception& e) {
    done = make_error(errc::internal, e.what());
  } catch (...) {
    done = make_error(errc::internal, "the invokable threw a non-standard exception");
  }
  if (!done) {
    end_with(graph::execution_state::failed, done.error().message);
    return;
  }
  if (setup_.io) {
    auto waits = !invokable_->has_work();
    setup_.io->step_ended(metrics::task_io_metrics::clock::now(), waits,
                          invokable_->waits_for_output() ? metrics::wait_reason::backpressured
                                                         : metrics::wait_reason::idle);
  }
  if (*done) {
    end_with(graph::execution_state::finished);
    return;
  }
  queue_step_if_working();
}

void task::queue_step_if_working() {
  if (invokable_ && invokable_->has_work() && !step_queued_) {
    step_queued_ = true;
    send(this, task_step_atom::value);
  }
}

void task::end_with(graph::execution_state final_state, std::string cause) {
  // Flink's Task: free the resources first, then send the final state. A JobMaster that restarts
  // the task at once may deploy its next attempt here, and that attempt registers the same
  // partition ids again.
  invokable_.reset();
  if (context_)
    context_->detach();
  report_state(final_state, std::move(cause));
  quit();
}

void task::report_state(graph::execution_state s, std::string cause) {
  state_ = s;
  if (setup_.report)
    setup_.report(cluster::task_execution_state{setup_.tdd.job_id, attempt_, s, std::move(cause)});
}

} // namespace flint::task_executor
