#include "runtime/node/stop_actors.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <caf/all.hpp>
#include <spdlog/logger.h>

#include "runtime/common/logging.hpp"

namespace flint::node {

void stop_and_wait(caf::actor_system& sys, const std::vector<caf::actor>& actors) {
  caf::scoped_actor self{sys, true};
  std::size_t live = 0;
  for (const auto& a : actors) {
    if (!a)
      continue;
    self->monitor(a);
    self->send_exit(a, caf::exit_reason::user_shutdown);
    ++live;
  }
  for (std::size_t i = 0; i < live; ++i)
    self->receive(
      [](caf::down_msg&) {},
      caf::after(std::chrono::seconds(10)) >>
        [] { make_endpoint_logger("stop_actors")->warn("An endpoint did not stop within 10 s."); });
}

bool await_detached_actors(caf::actor_system& sys, std::size_t baseline,
                           std::chrono::milliseconds timeout) {
  // CAF 0.17 signals nothing when a detached actor is destroyed: poll, backing off from 1 ms.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds{1};
  while (sys.detached_actors() > baseline) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds{20});
  }
  return true;
}

} // namespace flint::node
