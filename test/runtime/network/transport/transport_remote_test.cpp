// One remote channel between two processes over CAF's middleman on 127.0.0.1: the peer
// (flint-test-transport-peer) produces, this process consumes.

#include "transport_test_util.hpp"

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/network/result_partition_manager.hpp"
#include "runtime/network/transport/partition_request_server.hpp"
#include "runtime/network/transport/partition_server_connection.hpp"
#include "test/support/child_process.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

using namespace flint;
using namespace flint::network;
using namespace flint::network::transport;
using namespace std::chrono_literals;
using flint::network::transport::test::checksum;
using flint::network::transport::test::consumer_side;
using flint::network::transport::test::make_record;
using flint::network::transport::test::record_size;

namespace {

constexpr std::size_t num_records = 2000;

struct remote_fixture {
  flint::test::child_process peer{{FLINT_TEST_TRANSPORT_PEER, std::to_string(num_records)}};
  std::uint16_t port = 0;
  caf::actor_system_config cfg;
  caf::actor_system sys{rpc::configure_node(cfg, {})};
  caf::actor server;

  remote_fixture() {
    REQUIRE(peer.started());
    auto line = peer.read_line(10s);
    REQUIRE(line.has_value());
    REQUIRE(line->rfind("port=", 0) == 0);
    port = static_cast<std::uint16_t>(std::stoi(line->substr(5)));
    auto handle = rpc::connect_endpoint(sys, "127.0.0.1", port, "partition_server", 5s);
    REQUIRE(handle.has_value());
    server = *handle;
  }
};

} // namespace

TEST_CASE_FIXTURE(remote_fixture,
                  "records of many sizes cross to another process intact and in order") {
  result_partition_id id{graph::intermediate_data_set_id{9, 1}, 0};
  consumer_side side{network_config{}, id, 0};
  std::size_t next = 0;
  std::size_t mismatches = 0;
  std::size_t bytes = 0;
  checksum got;
  side.on_record = [&](std::span<const char> r) {
    auto expected = make_record(next, record_size(next));
    if (std::string(r.begin(), r.end()) != expected)
      ++mismatches;
    got.add(r);
    bytes += r.size();
    ++next;
  };
  std::promise<void> done;
  side.on_done = [&] { done.set_value(); };
  auto consumer = flint::network::transport::test::spawn_consumer(sys, side, server);
  REQUIRE(done.get_future().wait_for(30s) == std::future_status::ready);
  caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(side.records == num_records);
  CHECK(mismatches == 0);
  checksum want;
  std::size_t want_bytes = 0;
  for (std::size_t i = 0; i < num_records; ++i) {
    auto r = make_record(i, record_size(i));
    want.add(r);
    want_bytes += r.size();
  }
  CHECK(got.value == want.value);
  CHECK(bytes == want_bytes);
  // Consumer memory stayed within its exclusive and floating buffers throughout.
  CHECK(side.gate.floating_pool()->num_requested() <= side.config.floating_buffers_per_gate);
}

TEST_CASE_FIXTURE(remote_fixture,
                  "an unknown partition in another process is refused with a clear reason") {
  network_config config;
  config.request_backoff_max = 100ms; // one retry, then give up
  consumer_side side{config, result_partition_id{graph::intermediate_data_set_id{9, 2}, 0}, 0};
  std::promise<void> done;
  side.on_done = [&] { done.set_value(); };
  auto consumer = flint::network::transport::test::spawn_consumer(sys, side, server);
  REQUIRE(done.get_future().wait_for(10s) == std::future_status::ready);
  caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::not_found);
  CHECK(side.failure->message.find("00000000000000090000000000000002#0") != std::string::npos);
  CHECK(side.client->requests_sent() == 2);
}

namespace {

/// Two actor systems, each publishing a partition request server on 127.0.0.1.
struct two_nodes {
  caf::actor_system_config cfg_a, cfg_b;
  caf::actor_system a{rpc::configure_node(cfg_a, {})};
  caf::actor_system b{rpc::configure_node(cfg_b, {})};
  result_partition_manager manager_a, manager_b;
  caf::actor server_a = spawn_partition_request_server(a, manager_a);
  caf::actor server_b = spawn_partition_request_server(b, manager_b);
  std::uint16_t port_a = publish(a, server_a);
  std::uint16_t port_b = publish(b, server_b);

  static std::uint16_t publish(caf::actor_system& sys, const caf::actor& server) {
    auto port = sys.middleman().publish(server, 0, "127.0.0.1");
    REQUIRE(static_cast<bool>(port));
    return *port;
  }
  ~two_nodes() {
    caf::anon_send_exit(server_a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(server_b, caf::exit_reason::user_shutdown);
  }
};

/// True when `server` answers `n` pings in a row.
bool answers(caf::actor_system& sys, const caf::actor& server, int n) {
  caf::scoped_actor self{sys};
  for (int i = 0; i < n; ++i) {
    bool ok = false;
    self->request(server, 5s, ping_atom::value)
      .receive([&](ping_atom) { ok = true; }, [](caf::error&) {});
    if (!ok)
      return false;
  }
  return true;
}

} // namespace

TEST_CASE(
  "two nodes connecting to each other's partition server at once both keep a working link") {
  // The mutual connect of two TaskManagers that consume each other's partitions. CAF 0.17 loses
  // the link in about 1% of such rounds (partition_server_connection.hpp); the round trip on
  // connect notices and connects again, so every round ends with both links working.
  for (int round = 0; round < 40; ++round) {
    CAPTURE(round);
    two_nodes nodes;
    expected<caf::actor> a_to_b = make_error(errc::unreachable, "not run");
    expected<caf::actor> b_to_a = make_error(errc::unreachable, "not run");
    std::thread from_a(
      [&] { a_to_b = connect_partition_server(nodes.a, "127.0.0.1", nodes.port_b); });
    std::thread from_b(
      [&] { b_to_a = connect_partition_server(nodes.b, "127.0.0.1", nodes.port_a); });
    from_a.join();
    from_b.join();
    REQUIRE_MESSAGE(a_to_b.has_value(), (a_to_b ? "" : a_to_b.error().to_string()));
    REQUIRE_MESSAGE(b_to_a.has_value(), (b_to_a ? "" : b_to_a.error().to_string()));
    CHECK(answers(nodes.a, *a_to_b, 3));
    CHECK(answers(nodes.b, *b_to_a, 3));
  }
}

TEST_CASE(
  "a server that never answers the connection's round trip is given up after the configured attempts") {
  caf::actor_system_config cfg_a, cfg_b;
  caf::actor_system a{rpc::configure_node(cfg_a, {})};
  caf::actor_system b{rpc::configure_node(cfg_b, {})};
  // Published, so connecting works, but it answers no ping (CAF replies with an error).
  auto mute =
    b.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](std::int32_t) {}}; });
  auto port = b.middleman().publish(mute, 0, "127.0.0.1");
  REQUIRE(static_cast<bool>(port));
  connect_options options;
  options.attempts = 3;
  options.round_trip_timeout = 2s;
  options.max_pause = 1ms;
  auto server = connect_partition_server(a, "127.0.0.1", *port, options);
  REQUIRE_FALSE(server.has_value());
  CHECK(server.error().code == errc::unreachable);
  CHECK(server.error().message.find("no answer on any of 3 connections") != std::string::npos);
  caf::anon_send_exit(mute, caf::exit_reason::user_shutdown);
}

TEST_CASE("connecting to a port where nothing listens fails at once with the reason") {
  caf::actor_system_config cfg;
  caf::actor_system sys{rpc::configure_node(cfg, {})};
  // A port that was just free: bound by a published actor, then unpublished.
  auto probe =
    sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](std::int32_t) {}}; });
  auto port = sys.middleman().publish(probe, 0, "127.0.0.1");
  REQUIRE(static_cast<bool>(port));
  REQUIRE(static_cast<bool>(sys.middleman().unpublish(probe, *port)));
  caf::anon_send_exit(probe, caf::exit_reason::user_shutdown);
  auto server = connect_partition_server(sys, "127.0.0.1", *port);
  REQUIRE_FALSE(server.has_value());
  CHECK(server.error().message.rfind("connecting failed: ", 0) == 0);
}
