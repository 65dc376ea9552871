// One remote channel between two processes over CAF's middleman on 127.0.0.1: the peer
// (flint-test-transport-peer) produces, this process consumes.

#include "transport_test_util.hpp"

#include "runtime/actors/rpc/rpc_service.hpp"
#include "test/support/child_process.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
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

TEST_CASE_FIXTURE(remote_fixture, "records of many sizes cross to another process intact and in order") {
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

TEST_CASE_FIXTURE(remote_fixture, "an unknown partition in another process is refused with a clear reason") {
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
