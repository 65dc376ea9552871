#pragma once
/// A doctest fixture on CAF's deterministic `test_coordinator` and its manual clock: spawned
/// actors run only when the test says so, one message at a time, and time moves only when the
/// test advances it. No sleeps, no races.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "runtime/actors/rpc/rpc_endpoint.hpp"
#include "runtime/actors/trace/trace_recorder.hpp"

namespace flint::test {

/// Configures an actor system for deterministic tests (the testing scheduler, CAF quiet).
caf::actor_system_config& deterministic_config(caf::actor_system_config& cfg);

class test_fixture {
public:
  test_fixture();
  ~test_fixture();

  /// Spawns an actor; the fixture stops it at the end of the test.
  template <class T, class... Ts>
  caf::actor spawn(Ts&&... xs) {
    auto a = sys.spawn<T>(std::forward<Ts>(xs)...);
    spawned_.push_back(a);
    return a;
  }

  /// The actor object behind a handle, to read its state between steps (while it lives).
  template <class T>
  static T& deref(const caf::actor& a) {
    return dynamic_cast<T&>(*caf::actor_cast<caf::abstract_actor*>(a));
  }

  /// A context for an endpoint of this test: recorded into `recorder`, with `ask_timeout`.
  rpc::endpoint_context context(std::string endpoint_id,
                                std::chrono::nanoseconds ask_timeout = std::chrono::seconds(10));

  /// Runs `f` in `endpoint`'s main thread (queued; `run()` executes it).
  template <class T>
  void in_main_thread(const caf::actor& endpoint, std::function<void(T&)> f) {
    auto* self = &deref<T>(endpoint);
    self->run_async([self, f = std::move(f)] { f(*self); });
  }

  /// Handles every queued message.
  size_t run() { return sched.run(); }
  /// Handles exactly one queued message; false when nothing was queued.
  bool run_once() { return sched.try_run_once(); }
  /// Moves the manual clock, fires what became due, and handles the resulting messages.
  void advance(std::chrono::nanoseconds d) {
    sched.advance_time(d);
    sched.run();
  }

  /// Trace records of this test, oldest first.
  std::vector<trace::record> trace() const { return recorder.snapshot(); }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  trace::trace_recorder recorder;

private:
  std::vector<caf::actor> spawned_;
};

/// An endpoint whose methods are lambdas given by the test (Flink's Testing*GatewayBuilder):
/// it records nothing by itself beyond the trace, and answers as the lambdas say.
class fake_endpoint : public rpc::rpc_endpoint {
public:
  using setup_fn = std::function<void(fake_endpoint&)>;

  fake_endpoint(caf::actor_config& cfg, rpc::endpoint_context ctx, setup_fn setup = {});

  template <class M, class F>
  void on(rpc::fencing f, F fn) {
    handle<M>(f, std::move(fn));
  }
  template <class M, class F>
  void on_async(rpc::fencing f, F fn) {
    handle_async<M>(f, std::move(fn));
  }

protected:
  void on_start() override;

private:
  setup_fn setup_;
};

/// True when `records` contains, in this order (not necessarily adjacent), records matching
/// each (direction, method) pair.
bool contains_in_order(const std::vector<trace::record>& records,
                       const std::vector<std::pair<trace::direction, std::string>>& steps);

} // namespace flint::test
