#include "runtime/node/stop_actors.hpp"

#include <chrono>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

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
    self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(10)) >> [] {
      spdlog::warn("An endpoint did not stop within 10 s.");
    });
}

} // namespace flint::node
