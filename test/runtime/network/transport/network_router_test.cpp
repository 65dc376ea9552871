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
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
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

namespace {

/// `msg` as the sending middleman writes it.
std::vector<char> serialize(caf::actor_system& sys, const caf::message& msg) {
  std::vector<char> out;
  caf::binary_serializer sink{sys, out};
  auto err = sink(const_cast<caf::message&>(msg));
  REQUIRE_MESSAGE(!err, caf::to_string(err));
  return out;
}

/// The message the receiving middleman reads from `bytes` (it is the only holder), or its error.
caf::expected<caf::message> deserialize(caf::actor_system& sys, const std::vector<char>& bytes) {
  caf::message out;
  caf::binary_deserializer source{sys, bytes.data(), bytes.size()};
  if (auto err = source(out))
    return err;
  return out;
}

} // namespace

TEST_CASE_FIXTURE(router_fixture,
                  "a buffer message crosses the wire and reaches the channel equal, for every size "
                  "from 0 to the segment size; a full one without another copy") {
  auto segment = config.segment_size;
  std::uint64_t sequence = 0;
  for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{100}, segment / 2,
                           segment - 1, segment}) {
    CAPTURE(size);
    std::vector<char> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
      bytes[i] = static_cast<char>('a' + (i * 7 + size) % 26);
    auto received = deserialize(sys, serialize(sys, to_message(buffer_message{
                                                      {0, 0}, sequence, 0, 0, bytes})));
    REQUIRE(received);
    ++sequence;
    CHECK_FALSE(received->shared());
    auto* arrived = received->get_as<std::vector<char>>(buffer_message::bytes_index).data();
    // As the middleman hands it to the consumer: the message is the consumer's alone.
    CHECK(route_to_consumer(*received, side));
    REQUIRE_FALSE(side.failure);
    auto next = side.gate.poll_next();
    REQUIRE(next);
    REQUIRE(next->buf.is_data());
    CHECK(next->buf.size() == size);
    CHECK(std::equal(bytes.begin(), bytes.end(), next->buf.data()));
    // A credited buffer of the channel: it goes back to the channel's pools when read.
    CHECK(next->buf.recycler() != nullptr);
    CHECK(next->buf.capacity() == segment);
    if (size == segment) {
      // The received memory itself, taken out of the message.
      CHECK(next->buf.data() == arrived);
      CHECK(received->get_as<std::vector<char>>(buffer_message::bytes_index).empty());
    } else if (size > 0) {
      CHECK(next->buf.data() != arrived);
    }
  }
  // The budget is intact: every buffer went back, the adopted memory among them.
  CHECK(side.channel->num_available_buffers() >= config.buffers_per_channel);
}

TEST_CASE_FIXTURE(router_fixture,
                  "a buffer message is its atom and one byte vector, the header behind the "
                  "payload, and reads back exactly; one too short for the header is refused") {
  // CAF 0.17 writes every element with its type's name and reads each into an object of its own:
  // two elements, as bare CAF's vector and an atom, instead of seven.
  std::vector<char> bytes(100);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(i * 3);
  buffer_message sent{{0xfffffffeu, 0x80000001u}, 0xfedcba9876543210ull, 0x0123456789abcdefull,
                      static_cast<wire_kind>(buffer_kind::checkpoint_barrier), bytes};
  auto msg = to_message(sent);
  CHECK(msg.size() == 2);
  CHECK(msg.get_as<std::vector<char>>(buffer_message::bytes_index).size()
        == bytes.size() + buffer_message::header_size);
  // The documented layout, byte for byte: gate, channel (4 bytes), sequence, backlog (8), kind
  // (1), each little-endian, behind the payload (a symmetric round trip would not pin it).
  const auto& wire = msg.get_as<std::vector<char>>(buffer_message::bytes_index);
  const unsigned char header[buffer_message::header_size] = {
    0xfe, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x80, 0x10, 0x32, 0x54, 0x76, 0x98,
    0xba, 0xdc, 0xfe, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
    static_cast<unsigned char>(buffer_kind::checkpoint_barrier)};
  CHECK(std::equal(bytes.begin(), bytes.end(), wire.begin()));
  CHECK(std::equal(std::begin(header), std::end(header), wire.begin() + bytes.size(),
                   [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); }));
  auto received = deserialize(sys, serialize(sys, msg));
  REQUIRE(received);
  auto back = from_message<buffer_message>(*received);
  REQUIRE_MESSAGE(back, back.error().to_string());
  CHECK(back->channel == input_channel_id{0xfffffffeu, 0x80000001u});
  CHECK(back->sequence == 0xfedcba9876543210ull);
  CHECK(back->backlog == 0x0123456789abcdefull);
  CHECK(back->kind == static_cast<wire_kind>(buffer_kind::checkpoint_barrier));
  CHECK(std::equal(bytes.begin(), bytes.end(), back->bytes.begin(), back->bytes.end()));
  // An empty payload is the header alone.
  auto empty = from_message<buffer_message>(to_message(buffer_message{{0, 0}, 1, 2, 0, {}}));
  REQUIRE(empty);
  CHECK(empty->bytes.empty());
  CHECK(empty->sequence == 1);
  // Shorter than the header: no buffer message, and nothing reaches the channel.
  auto cut = caf::make_message(buffer_atom::value,
                               std::vector<char>(buffer_message::header_size - 1, 'c'));
  auto refused = from_message<buffer_message>(cut);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == errc::malformed_message);
  CHECK_MESSAGE(refused.error().message.find("shorter than the buffer header") != std::string::npos,
                refused.error().message);
  // Read without the check first, it stays in bounds: an empty message.
  std::vector<char> short_bytes(buffer_message::header_size - 1, 'c');
  auto unchecked = buffer_message::from_wire(wire_refs<buffer_message::wire>{short_bytes});
  CHECK(unchecked.bytes.empty());
  CHECK(unchecked.sequence == 0);
  CHECK(route_to_consumer(cut, side));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::malformed_message);
  CHECK(side.channel->num_queued() == 0);
}

TEST_CASE_FIXTURE(router_fixture,
                  "a buffer message another holder shares is read in place and left intact") {
  std::vector<char> bytes(config.segment_size, 's');
  auto msg = to_message(buffer_message{{0, 0}, 0, 0, 0, bytes});
  auto other = msg;
  CHECK(route_to_consumer(msg, side));
  REQUIRE_FALSE(side.failure);
  auto next = side.gate.poll_next();
  REQUIRE(next);
  CHECK(next->buf.size() == bytes.size());
  auto kept = from_message<buffer_message>(other);
  REQUIRE(kept);
  CHECK(std::equal(bytes.begin(), bytes.end(), kept->bytes.begin(), kept->bytes.end()));
  CHECK(next->buf.data() != kept->bytes.data());
}

TEST_CASE_FIXTURE(router_fixture,
                  "a buffer larger than the segment, or cut short on the wire, is refused with "
                  "the reason, not read") {
  std::vector<char> too_big(config.segment_size + 1, 'x');
  auto big = deserialize(sys, serialize(sys, to_message(buffer_message{{0, 0}, 0, 0, 0, too_big})));
  REQUIRE(big);
  CHECK(route_to_consumer(*big, side));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::invalid_argument);
  CHECK_MESSAGE(side.failure->message.find("exceeds the segment size") != std::string::npos,
                side.failure->message);
  CHECK(side.channel->num_queued() == 0);
  // Cut short: CAF reads no buffer message from it (an error, or an empty message, which the
  // router leaves to the actor), so nothing partial reaches the channel.
  std::vector<char> full(config.segment_size, 'y');
  auto wire = serialize(sys, to_message(buffer_message{{0, 0}, 0, 0, 0, full}));
  wire.resize(wire.size() - 100);
  auto cut = deserialize(sys, wire);
  if (cut) {
    CHECK(cut->empty());
    CHECK_FALSE(route_to_consumer(*cut, side));
  }
  CHECK(side.channel->num_queued() == 0);
  // Bytes of another type where the payload belongs: the layout it lacks, not read.
  auto wrong = deserialize(
    sys, serialize(sys, caf::make_message(buffer_atom::value, wire_u32{0}, wire_u32{0},
                                          wire_u64{0}, wire_u64{0}, wire_kind{0},
                                          std::string(100, 'z'))));
  REQUIRE(wrong);
  side.failure.reset();
  CHECK(route_to_consumer(*wrong, side));
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::malformed_message);
  CHECK_MESSAGE(side.failure->message.find("bytes") != std::string::npos, side.failure->message);
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
