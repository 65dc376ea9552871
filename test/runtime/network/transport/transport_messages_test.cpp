// The transport messages' one definition: each named message goes into a CAF message of builtin
// types and comes back equal; anything else is refused with the layout it lacks.

#include "runtime/network/transport/transport_messages.hpp"
#include "test/support/test_fixture.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using namespace flint::network::transport;

namespace {

/// An actor handle to put into messages (never run).
struct actor_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  caf::actor consumer =
    sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](int) {}}; });

  ~actor_fixture() {
    caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
    sched.run();
  }
};

partition_request_message sample_request(const caf::actor& consumer) {
  return {consumer,
          graph::job_id{0x1122334455667788ULL, 0x99aabbccddeeff00ULL},
          result_partition_id{graph::intermediate_data_set_id{0xfedcba9876543210ULL, 42}, 7},
          3,
          input_channel_id{2, 5},
          12};
}

} // namespace

TEST_CASE_FIXTURE(
  actor_fixture,
  "a partition request goes into a CAF message of builtin types and comes back equal") {
  auto request = sample_request(consumer);
  auto msg = to_message(request);
  // The wire form peers of other builds read: an atom and fixed-width integers, nothing registered.
  CHECK(msg.size() == 11);
  CHECK(msg.match_elements<partition_request_atom, caf::actor, wire_u64, wire_u64, wire_u64,
                           wire_u64, wire_i32, wire_u64, wire_u32, wire_u32, wire_u64>());
  CHECK(is_message<partition_request_message>(msg));
  CHECK_FALSE(is_message<cancel_request_message>(msg));
  auto back = from_message<partition_request_message>(msg);
  REQUIRE_MESSAGE(back.has_value(), back.error().to_string());
  CHECK(back->consumer == consumer);
  CHECK(back->job == request.job);
  CHECK(back->partition == request.partition);
  CHECK(back->subpartition == 3);
  CHECK(back->channel == input_channel_id{2, 5});
  CHECK(back->initial_credit == 12);
}

TEST_CASE_FIXTURE(actor_fixture,
                  "every other transport message comes back equal from its CAF message") {
  std::vector<char> bytes{'a', 'b', 'c'};
  auto buf = from_message<buffer_message>(to_message(buffer_message{{1, 2}, 9, 4, 1, bytes}));
  REQUIRE(buf.has_value());
  CHECK(buf->channel == input_channel_id{1, 2});
  CHECK(buf->sequence == 9);
  CHECK(buf->backlog == 4);
  CHECK(buf->kind == 1);
  // The parsed message views the bytes of the message it came from.
  auto as_message = to_message(buffer_message{{1, 2}, 9, 4, 1, bytes});
  auto viewed = from_message<buffer_message>(as_message);
  REQUIRE(viewed.has_value());
  CHECK(std::string(viewed->bytes.begin(), viewed->bytes.end()) == "abc");
  CHECK(viewed->bytes.data()
        == as_message.get_as<std::vector<char>>(buffer_message::bytes_index).data());

  shared_buffer holder{std::make_shared<buffer>()};
  auto local =
    from_message<local_buffer_message>(to_message(local_buffer_message{{0, 1}, 2, 3, holder}));
  REQUIRE(local.has_value());
  CHECK(local->channel == input_channel_id{0, 1});
  CHECK(local->sequence == 2);
  CHECK(local->backlog == 3);
  CHECK(local->holder.buf == holder.buf);

  auto credit =
    from_message<add_credit_message>(to_message(add_credit_message{consumer, {3, 4}, 5}));
  REQUIRE(credit.has_value());
  CHECK(credit->consumer == consumer);
  CHECK(credit->channel == input_channel_id{3, 4});
  CHECK(credit->credit == 5);

  auto refused = from_message<partition_error_message>(
    to_message(partition_error_message{{6, 7}, static_cast<wire_i32>(errc::not_found), "not yet"}));
  REQUIRE(refused.has_value());
  CHECK(refused->channel == input_channel_id{6, 7});
  CHECK(static_cast<errc>(refused->code) == errc::not_found);
  CHECK(refused->text == "not yet");

  auto request = sample_request(consumer);
  auto cancel = from_message<cancel_request_message>(to_message(cancel_request_message{
    consumer, request.channel, request.job, request.partition, request.subpartition}));
  REQUIRE(cancel.has_value());
  CHECK(cancel->consumer == consumer);
  CHECK(cancel->channel == request.channel);
  CHECK(cancel->job == request.job);
  CHECK(cancel->partition == request.partition);
  CHECK(cancel->subpartition == request.subpartition);

  auto retry = from_message<retry_request_message>(to_message(retry_request_message{{8, 9}}));
  REQUIRE(retry.has_value());
  CHECK(retry->channel == input_channel_id{8, 9});
}

TEST_CASE_FIXTURE(actor_fixture,
                  "a malformed partition request is refused with the layout it lacks, not read") {
  auto expect_refused = [](const caf::message& msg, const std::string& got) {
    auto parsed = from_message<partition_request_message>(msg);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == errc::malformed_message);
    const auto& text = parsed.error().message;
    CHECK_MESSAGE(text.find("malformed partition request message") != std::string::npos, text);
    CHECK_MESSAGE(
      text.find(
        "expected (flint_preq, actor, u64, u64, u64, u64, i32, u64, u32, u32, u64) (11 elements)")
        != std::string::npos,
      text);
    CHECK_MESSAGE(text.find(got) != std::string::npos, text);
  };
  // Too few elements.
  expect_refused(caf::make_message(partition_request_atom::value, consumer, wire_u64{1}),
                 "(3 elements)");
  // Right arity, a 32-bit partition number where the subpartition belongs.
  auto request = sample_request(consumer);
  expect_refused(caf::make_message(partition_request_atom::value, consumer, request.job.upper(),
                                   request.job.lower(), request.partition.result.upper(),
                                   request.partition.result.lower(), wire_i32{7}, wire_u32{3},
                                   wire_u32{2}, wire_u32{5}, wire_u64{12}),
                 "(11 elements)");
  // Another message, and no atom at all.
  expect_refused(to_message(retry_request_message{{0, 0}}), "(3 elements)");
  expect_refused(caf::make_message(std::string{"hello"}), "hello");
  expect_refused(caf::message{}, "(0 elements)");
  CHECK_FALSE(is_message<partition_request_message>(caf::make_message(std::string{"hello"})));
  CHECK_FALSE(is_message<partition_request_message>(caf::message{}));
}

TEST_CASE("a stray buffer in a malformed message is not printed whole") {
  auto parsed = from_message<partition_request_message>(
    caf::make_message(partition_request_atom::value, std::vector<char>(100000, 'x')));
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().message.size() < 1000);
}
