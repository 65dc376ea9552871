#pragma once
/// A TaskManager node on loopback under `h`'s high availability, running compiled-in programs:
/// what the HA node tests and the standby REST test start beside their JobManagers.

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/node/task_manager_node.hpp"
#include "runtime/streaming/streaming_environment.hpp"

namespace flint::test {

inline std::unique_ptr<node::task_manager_node> start_ha_task_manager(
  const node::high_availability_settings& h, const std::string& resource_id, int slots) {
  using namespace std::chrono_literals;
  node::task_manager_settings ts;
  ts.host = "127.0.0.1";
  ts.bind_host = "127.0.0.1";
  ts.resource_id = resource_id;
  ts.number_of_slots = slots;
  ts.heartbeat.interval = 500ms;
  ts.heartbeat.timeout = 10s;
  ts.high_availability = h;
  node::task_manager_node_services services;
  services.make_invokables = [](caf::actor_system&, streaming::streaming_environment& env,
                                const std::string&, node::job_manager_locator) {
    return streaming::make_stream_task_factory(env);
  };
  services.write_stdout = [](std::string_view) {};
  auto tm = std::make_unique<node::task_manager_node>(ts, services);
  auto started = tm->start();
  REQUIRE_MESSAGE(started.has_value(), started.error().to_string());
  return tm;
}

} // namespace flint::test
