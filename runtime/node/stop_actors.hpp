#pragma once
/// How a node stops its actors (shared by the JobManager and TaskManager nodes).

#include <chrono>
#include <cstddef>
#include <vector>

#include <caf/fwd.hpp>

namespace flint::node {

/// Asks each actor to exit and waits (bounded, 10 s each) until all ended: endpoints use the HA
/// services and the directory owned by the node until their on_exit ran.
void stop_and_wait(caf::actor_system& sys, const std::vector<caf::actor>& actors);

/// Waits (bounded) until `sys` runs no more than `baseline` detached actors, and says whether it
/// got there. A detached actor's thread lasts until the actor object is destroyed, which may be
/// well after its on_exit: messages in flight still hold it, such as its down message to the
/// middleman's broker, which monitors every actor that another node holds a proxy of. CAF 0.17's
/// actor_system destructor stops the middleman first and then waits for every detached thread,
/// so destroying the system inside that window can wait forever.
bool await_detached_actors(caf::actor_system& sys, std::size_t baseline,
                           std::chrono::milliseconds timeout);

} // namespace flint::node
