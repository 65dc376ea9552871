// The network router: transport messages reach the client of the channel they name, or the
// server's handler for their kind, by name; malformed ones are refused with a reason and
// anything else is left to the actor.

#include "transport_test_util.hpp"

#include "runtime/network/transport/network_router.hpp"
#include "runtime/network/transport/transport_messages.hpp"
#include "test/support/test_fixture.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/system_messages.hpp>

#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using namespace flint::network::transport;
using flint::network::transport::test::consumer_side;

namespace {

/// A consumer whose requests go to a server actor that never answers: every message of the
/// channel is the test's.
struct router_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::actor silent = sys.spawn([](caf::event_based_actor* self) -> caf::behavior {
    self->set_default_handler(caf::drop);
    return {[](int) {}};
  });
  network_config config;
  result_partition_id id{graph::intermediate_data_set_id{3, 4}, 0};
  consumer_side side{config, id, 0};

  router_fixture() {
    side.auto_consume = false;
    side.start(silent, silent);
    REQUIRE_FALSE(side.failure);
  }
  ~router_fixture() {
    side.client.reset();
    caf::anon_send_exit(silent, caf::exit_reason::user_shutdown);
    sched.run();
    sched.clock().cancel_all();
    sched.run();
  }

  bool route(const caf::message& msg) {
    // A message is a tuple itself (and content() of an empty one has nothing to refer to).
    auto copy = msg;
    return route_to_consumer(copy, side);
  }
};

/// Records what the router hands a server.
struct recording_server final : server_routes {
  std::vector<partition_request_message> requests;
  std::vector<add_credit_message> credits;
  std::vector<cancel_request_message> cancels;
  std::vector<error> malformed;
  void on_request(const partition_request_message& r) override { requests.push_back(r); }
  void on_credit(const add_credit_message& c) override { credits.push_back(c); }
  void on_cancel(const cancel_request_message& c) override { cancels.push_back(c); }
  void on_malformed(error cause) override { malformed.push_back(std::move(cause)); }
};

/// Records a consumer's failures and lost servers; it has no channels.
struct recording_consumer final : consumer_routes {
  std::vector<error> failures;
  std::vector<caf::actor_addr> down;
  remote_channel_client* client_of(const input_channel_id&) override { return nullptr; }
  bool is_reading(const input_channel_id&) const override { return false; }
  void fail(error cause) override { failures.push_back(std::move(cause)); }
  void server_down(const caf::down_msg& msg) override { down.push_back(msg.source); }
};

} // namespace

TEST_CASE_FIXTURE(
  router_fixture,
  "the router hands a buffer to the client of its channel and drops one for no channel") {
  std::vector<char> bytes(100, 'r');
  CHECK(route(to_message(buffer_message{{0, 0}, 0, 0, 0, bytes})));
  CHECK(side.channel->num_queued() == 1);
  CHECK_FALSE(side.failure);
  // Another gate or channel of the task: nobody's, dropped quietly.
  CHECK(route(to_message(buffer_message{{0, 1}, 1, 0, 0, bytes})));
  CHECK(route(to_message(buffer_message{{7, 0}, 1, 0, 0, bytes})));
  CHECK(side.channel->num_queued() == 1);
  CHECK_FALSE(side.failure);
  // Out of sequence: the client refuses it and the consumer fails with its reason.
  CHECK(route(to_message(buffer_message{{0, 0}, 5, 0, 0, bytes})));
  REQUIRE(side.failure);
  CHECK(side.channel->num_queued() == 1);
}

TEST_CASE_FIXTURE(router_fixture,
                  "the router hands a local buffer over, taking it out of its holder") {
  std::string bytes(64, 'l');
  shared_buffer holder{std::make_shared<buffer>(
    buffer::unpooled_copy(std::span<const char>(bytes.data(), bytes.size())))};
  CHECK(route(to_message(local_buffer_message{{0, 0}, 0, 0, holder})));
  CHECK_FALSE(side.failure);
  CHECK(side.channel->num_queued() == 1);
  CHECK_FALSE(*holder.buf);
  // An empty holder is no buffer at all.
  CHECK(route(to_message(local_buffer_message{{0, 0}, 1, 0, shared_buffer{}})));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::malformed_message);
}

TEST_CASE_FIXTURE(router_fixture,
                  "the router retries a refused request only while its channel still reads") {
  CHECK(side.client->requests_sent() == 1);
  CHECK(route(to_message(
    partition_error_message{{0, 0}, static_cast<wire_i32>(errc::not_found), "not yet"})));
  CHECK_FALSE(side.failure);
  CHECK(route(to_message(retry_request_message{{0, 0}})));
  CHECK(side.client->requests_sent() == 2);
  side.ended = true;
  CHECK(route(to_message(retry_request_message{{0, 0}})));
  CHECK(side.client->requests_sent() == 2);
  // A final refusal fails the consumer with the server's text.
  CHECK(route(to_message(partition_error_message{
    {0, 0}, static_cast<wire_i32>(errc::rejected), "no such subpartition"})));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::rejected);
  CHECK(side.failure->message == "no such subpartition");
}

TEST_CASE_FIXTURE(
  router_fixture,
  "the router fails a consumer on a malformed transport message and leaves others alone") {
  CHECK(route(caf::make_message(buffer_atom::value, wire_u32{0})));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::malformed_message);
  CHECK_MESSAGE(side.failure->message.find("malformed buffer message") != std::string::npos,
                side.failure->message);
  CHECK(side.channel->num_queued() == 0);
  // Not the transport's: the actor handles them (or drops them).
  CHECK_FALSE(route(caf::make_message(std::string{"hello"})));
  CHECK_FALSE(route(caf::make_message(ping_atom::value)));
  CHECK_FALSE(route(to_message(add_credit_message{silent, {0, 0}, 1})));
  CHECK_FALSE(route(caf::message{}));
}

TEST_CASE("the router tells a consumer that a monitored server is gone") {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto server = sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](int) {}}; });
  recording_consumer consumer;
  auto msg = caf::make_message(caf::down_msg{server.address(), caf::exit_reason::kill});
  CHECK(route_to_consumer(msg, consumer));
  REQUIRE(consumer.down.size() == 1);
  CHECK(consumer.down[0] == server.address());
  CHECK(consumer.failures.empty());
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  sched.run();
}

TEST_CASE("the router hands a server its requests, credit and cancels by name") {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  auto consumer = sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](int) {}}; });
  recording_server server;
  graph::job_id job{5, 6};
  result_partition_id partition{graph::intermediate_data_set_id{7, 8}, 2};

  auto request = to_message(partition_request_message{consumer, job, partition, 1, {3, 4}, 2});
  CHECK(route_to_server(request, server));
  REQUIRE(server.requests.size() == 1);
  CHECK(server.requests[0].consumer == consumer);
  CHECK(server.requests[0].job == job);
  CHECK(server.requests[0].partition == partition);
  CHECK(server.requests[0].subpartition == 1);
  CHECK(server.requests[0].channel == input_channel_id{3, 4});
  CHECK(server.requests[0].initial_credit == 2);

  auto credit = to_message(add_credit_message{consumer, {3, 4}, 9});
  CHECK(route_to_server(credit, server));
  REQUIRE(server.credits.size() == 1);
  CHECK(server.credits[0].credit == 9);

  auto cancel = to_message(cancel_request_message{consumer, {3, 4}, job, partition, 1});
  CHECK(route_to_server(cancel, server));
  REQUIRE(server.cancels.size() == 1);
  CHECK(server.cancels[0].partition == partition);

  // A request of the wrong layout is the server's to refuse, with the reason; no handler runs.
  auto bad = caf::make_message(partition_request_atom::value, consumer, wire_u32{1});
  CHECK(route_to_server(bad, server));
  REQUIRE(server.malformed.size() == 1);
  CHECK(server.malformed[0].code == errc::malformed_message);
  CHECK_MESSAGE(
    server.malformed[0].message.find("malformed partition request message") != std::string::npos,
    server.malformed[0].message);
  CHECK(server.requests.size() == 1);

  // Consumer-side messages are not the server's.
  auto buf = to_message(buffer_message{{0, 0}, 0, 0, 0, {}});
  CHECK_FALSE(route_to_server(buf, server));
  auto ping = caf::make_message(ping_atom::value);
  CHECK_FALSE(route_to_server(ping, server));
  CHECK(server.requests.size() == 1);
  CHECK(server.credits.size() == 1);
  CHECK(server.cancels.size() == 1);

  caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
  sched.run();
}
