#include "network_test_util.hpp"

#include "runtime/network/network_environment.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/remote_input_channel.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

network_config small_config() {
  network_config config;
  config.segment_size = 1024;
  config.network_memory = 64 * 1024; // 64 segments
  return config;
}

} // namespace

TEST_CASE("the environment sizes partition pools from the configuration and registers them") {
  network_environment env{small_config()};
  CHECK(env.global_pool()->total_segments() == 64);
  auto partition = env.create_result_partition(test::partition_id(1, 0), 3);
  REQUIRE(partition);
  CHECK((*partition)->pool()->min_segments() == 4);
  CHECK((*partition)->pool()->max_segments() == 3 * 2 + 8);
  CHECK(env.partition_manager().num_partitions() == 1);

  auto again = env.create_result_partition(test::partition_id(1, 0), 3);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == errc::illegal_state);
  CHECK(env.global_pool()->required_segments() == 4); // the refused one gave its minimum back

  auto huge = env.create_result_partition(test::partition_id(2, 0), 100);
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == errc::rejected);
  CHECK(huge.error().message.find("insufficient number of network buffers") != std::string::npos);
}

TEST_CASE("the environment builds gates of local and remote channels") {
  network_environment env{small_config()};
  auto producer = *env.create_result_partition(test::partition_id(1, 0), 2);
  auto gate = env.create_input_gate(
    3, {{test::partition_id(1, 0), 1, true}, {test::partition_id(9, 0), 0, false}, {test::partition_id(9, 1), 0, false}});
  REQUIRE(gate);
  // Two remote channels took two exclusive buffers each; the floating pool has no minimum.
  CHECK(env.global_pool()->required_segments() == 3 + 4);
  REQUIRE((*gate)->floating_pool());
  CHECK((*gate)->floating_pool()->max_segments() == 8);
  auto* remote = dynamic_cast<remote_input_channel*>(&(*gate)->channel(2));
  REQUIRE(remote);
  CHECK(remote->id() == input_channel_id{3, 2});
  CHECK(remote->partition_request().partition == test::partition_id(9, 1));

  REQUIRE((*gate)->request_partitions());
  auto record = make_record(1, 3000); // spans three 1 KiB buffers
  REQUIRE(producer->emit_record(record, 1) == emit_result::written);
  producer->flush_all();
  record_deserializer deserializer;
  std::vector<std::string> got;
  while (auto next = (*gate)->poll_next()) {
    CHECK(next->channel == 0);
    deserializer.set_next_buffer(std::move(next->buf));
    std::span<const char> r;
    while (deserializer.next_record(r) == deserialization_result::record)
      got.emplace_back(r.begin(), r.end());
  }
  CHECK(got == std::vector<std::string>{record});

  gate->reset();
  CHECK(env.global_pool()->required_segments() == 3);
  env.shutdown();
  CHECK(producer->is_released());
  CHECK(env.global_pool()->required_segments() == 0);
  CHECK(env.global_pool()->available_segments() == 64);
}

TEST_CASE("a gate whose exclusive buffers do not fit fails clearly") {
  auto config = small_config();
  config.buffers_per_channel = 40;
  network_environment env{config};
  auto gate = env.create_input_gate(0, {{test::partition_id(1, 0), 0, false}, {test::partition_id(1, 1), 0, false}});
  REQUIRE_FALSE(gate);
  CHECK(gate.error().code == errc::rejected);
  CHECK(gate.error().message.find("gate 0 channel 1") != std::string::npos);
  CHECK(env.global_pool()->required_segments() == 0);
  CHECK(env.global_pool()->available_segments() == 64);
}
