// How a node waits for its actors before it destroys its actor system (stop_actors.hpp).

#include <doctest/doctest.h>

#include <chrono>

#include <caf/all.hpp>

#include "runtime/node/stop_actors.hpp"

using namespace std::chrono_literals;

namespace {

caf::behavior idle(caf::event_based_actor*) {
  return {[](int) {}};
}

} // namespace

TEST_CASE("await_detached_actors waits until an ended detached actor is no longer referenced") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys, true};
  const auto baseline = sys.detached_actors();
  CHECK(flint::node::await_detached_actors(sys, baseline, 0ms));

  auto task = sys.spawn<caf::detached>(idle);
  self->monitor(task);
  self->send_exit(task, caf::exit_reason::user_shutdown);
  self->receive([](caf::down_msg&) {});
  // Ended, but the handle still holds it: its thread lives on, and the system's destructor
  // would wait for it.
  CHECK(sys.detached_actors() > baseline);
  CHECK_FALSE(flint::node::await_detached_actors(sys, baseline, 20ms));

  task = nullptr;
  CHECK(flint::node::await_detached_actors(sys, baseline, 30s));
  CHECK(sys.detached_actors() == baseline);
}

TEST_CASE("stop_and_wait ends every given actor and skips empty handles") {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto a = sys.spawn(idle);
  auto b = sys.spawn<caf::detached>(idle);
  caf::scoped_actor self{sys, true};
  self->monitor(a);
  self->monitor(b);
  flint::node::stop_and_wait(sys, {a, caf::actor{}, b});
  int down = 0;
  for (int i = 0; i < 2; ++i)
    self->receive([&](caf::down_msg& d) {
      CHECK(d.reason == caf::exit_reason::user_shutdown);
      ++down;
    });
  CHECK(down == 2);
}
