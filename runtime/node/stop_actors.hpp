#pragma once
/// How a node stops its actors (shared by the JobManager and TaskManager nodes).

#include <vector>

#include <caf/fwd.hpp>

namespace flint::node {

/// Asks each actor to exit and waits (bounded, 10 s each) until all ended: endpoints use the HA
/// services and the directory owned by the node until their on_exit ran.
void stop_and_wait(caf::actor_system& sys, const std::vector<caf::actor>& actors);

} // namespace flint::node
