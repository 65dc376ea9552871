#include "network_test_util.hpp"

#include "runtime/network/input_gate.hpp"
#include "runtime/network/local_input_channel.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_manager.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

/// `producers` partitions of one subpartition each in one TaskExecutor, read by one gate of local
/// channels.
struct local_fixture {
  std::shared_ptr<network_buffer_pool> global = network_buffer_pool::make(128, 64);
  result_partition_manager partitions;
  std::vector<std::shared_ptr<result_partition>> producers;
  input_gate gate{0, nullptr};
  int gate_woken = 0;

  explicit local_fixture(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      auto id = test::partition_id(7, static_cast<std::int32_t>(i));
      producers.push_back(
        std::make_shared<result_partition>(id, 1, *global->create_buffer_pool(2, 10)));
      REQUIRE(partitions.register_partition(producers.back()));
      gate.add_channel(std::make_unique<local_input_channel>(i, id, 0, partitions));
    }
    gate.set_availability_listener([this] { ++gate_woken; });
    REQUIRE(gate.setup());
    REQUIRE(gate.request_partitions());
  }

  void emit_buffer(std::size_t producer, std::size_t number) {
    // 60 bytes fill one buffer exactly.
    REQUIRE(producers[producer]->emit_record(make_record(number, 60), 0) == emit_result::written);
  }
};

} // namespace

TEST_CASE("end-of-partition reaches the gate and the gate finishes when all channels ended") {
  local_fixture f{3};
  f.emit_buffer(0, 1);
  f.producers[0]->finish();
  f.producers[2]->finish();

  std::vector<std::size_t> ended_channels;
  std::size_t data = 0;
  while (auto next = f.gate.poll_next()) {
    if (next->is_event())
      ended_channels.push_back(next->channel);
    else
      ++data;
  }
  CHECK(data == 1);
  CHECK(ended_channels.size() == 2);
  CHECK(f.gate.num_ended_channels() == 2);
  CHECK_FALSE(f.gate.is_finished());
  CHECK(f.gate.channel(0).is_released());
  CHECK_FALSE(f.gate.channel(1).is_released());

  f.emit_buffer(1, 2);
  f.producers[1]->finish();
  auto last_data = f.gate.poll_next();
  REQUIRE(last_data);
  CHECK(last_data->channel == 1);
  CHECK_FALSE(f.gate.is_finished());
  auto end = f.gate.poll_next();
  REQUIRE(end);
  CHECK(end->buf.kind() == buffer_kind::end_of_partition);
  CHECK(f.gate.is_finished());
  CHECK_FALSE(f.gate.poll_next());
}

TEST_CASE("the gate serves channels with data round robin") {
  local_fixture f{3};
  for (std::size_t n = 0; n < 3; ++n) {
    f.emit_buffer(0, n);
    f.emit_buffer(1, 10 + n);
  }
  f.emit_buffer(2, 20);
  std::vector<std::size_t> order;
  while (auto next = f.gate.poll_next())
    order.push_back(next->channel);
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 0, 1, 0, 1});
}

TEST_CASE("the gate wakes its owner when a channel turns non-empty, not for every buffer") {
  local_fixture f{2};
  CHECK(f.gate_woken == 0);
  f.emit_buffer(0, 1);
  CHECK(f.gate_woken == 1);
  f.emit_buffer(0, 2);
  f.emit_buffer(1, 3);
  CHECK(f.gate_woken == 1);
  while (f.gate.poll_next()) {
  }
  f.emit_buffer(1, 4);
  CHECK(f.gate_woken == 2);
}

TEST_CASE("a local channel moves the producer's buffer without copying") {
  local_fixture f{1};
  auto record = make_record(3, 60);
  REQUIRE(f.producers[0]->emit_record(record, 0) == emit_result::written);
  auto& pool = *f.producers[0]->pool();
  CHECK(pool.num_in_use() == 1);
  auto next = f.gate.poll_next();
  REQUIRE(next);
  // The very buffer of the producer's pool, with the record's bytes in place.
  CHECK(next->buf.recycler() == &pool);
  CHECK(std::string(next->buf.data() + 4, 60) == record);
  CHECK(pool.num_in_use() == 1);
  next.reset();
  CHECK(pool.num_in_use() == 0);
}

TEST_CASE("records of several producers arrive complete and in order per channel") {
  local_fixture f{2};
  test::rng random;
  std::vector<std::vector<std::string>> sent(2);
  std::vector<std::vector<std::string>> got(2);
  std::vector<record_deserializer> deserializers(2);
  auto drain = [&] {
    while (auto next = f.gate.poll_next()) {
      if (next->is_event())
        continue;
      auto& d = deserializers[next->channel];
      d.set_next_buffer(std::move(next->buf));
      std::span<const char> record;
      while (d.next_record(record) == deserialization_result::record)
        got[next->channel].emplace_back(record.begin(), record.end());
    }
  };
  for (std::size_t i = 0; i < 2000; ++i) {
    auto producer = random.below(2);
    sent[producer].push_back(make_record(i, random.below(200)));
    while (f.producers[producer]->emit_record(sent[producer].back(), 0) == emit_result::blocked) {
      // The local producer's pool is the backpressure: the consumer frees it.
      drain();
      while (f.producers[producer]->has_pending_record()
             && f.producers[producer]->resume() == emit_result::blocked)
        drain();
      break;
    }
    if (i % 50 == 0)
      for (auto& p : f.producers)
        p->flush_all();
    if (i % 7 == 0)
      drain();
  }
  for (auto& p : f.producers)
    p->finish();
  drain();
  CHECK(f.gate.is_finished());
  CHECK(got == sent);
}

TEST_CASE("a checkpoint barrier keeps its place behind the records written before it") {
  local_fixture f{1};
  f.emit_buffer(0, 1);
  REQUIRE(f.producers[0]->emit_record(make_record(2, 20), 0) == emit_result::written);
  REQUIRE(f.producers[0]->broadcast_checkpoint_barrier({4, 1234}));
  f.emit_buffer(0, 3);
  std::vector<buffer_kind> kinds;
  std::optional<checkpoint_barrier> seen;
  while (auto next = f.gate.poll_next()) {
    kinds.push_back(next->buf.kind());
    if (next->buf.kind() == buffer_kind::checkpoint_barrier)
      seen = barrier_of(next->buf);
  }
  // The half-full buffer before the barrier was flushed ahead of it.
  CHECK(kinds
        == std::vector<buffer_kind>{buffer_kind::data, buffer_kind::data,
                                    buffer_kind::checkpoint_barrier, buffer_kind::data});
  REQUIRE(seen.has_value());
  CHECK(*seen == checkpoint_barrier{4, 1234});
  // A finished partition takes no barrier.
  f.producers[0]->finish();
  auto late = f.producers[0]->broadcast_checkpoint_barrier({5, 1});
  REQUIRE_FALSE(late.has_value());
  CHECK(late.error().code == errc::rejected);
}

TEST_CASE("a barrier event's payload round-trips and a foreign event is no barrier") {
  auto event = to_event({0x0102030405060708, -3});
  CHECK(event.kind() == buffer_kind::checkpoint_barrier);
  CHECK(event.size() == 16);
  CHECK(barrier_of(event) == checkpoint_barrier{0x0102030405060708, -3});
  CHECK_FALSE(barrier_of(buffer::event(buffer_kind::end_of_partition)).has_value());
  std::vector<char> short_payload(7, 'x');
  CHECK_FALSE(
    barrier_of(buffer::unpooled_copy(short_payload, buffer_kind::checkpoint_barrier)).has_value());
  CHECK(std::string(to_string(buffer_kind::checkpoint_barrier)) == "checkpoint_barrier");
}

TEST_CASE("a blocked channel is skipped and its data read after it is resumed") {
  local_fixture f{2};
  f.emit_buffer(0, 1);
  f.emit_buffer(0, 2);
  f.emit_buffer(1, 3);
  auto first = f.gate.poll_next();
  REQUIRE(first);
  CHECK(first->channel == 0);
  f.gate.block_channel(0); // as after a barrier on channel 0
  CHECK(f.gate.is_blocked(0));
  std::vector<std::size_t> order;
  while (auto next = f.gate.poll_next())
    order.push_back(next->channel);
  CHECK(order == std::vector<std::size_t>{1});
  // Data arriving while held waits too, and wakes nobody.
  auto woken = f.gate_woken;
  f.emit_buffer(0, 4);
  CHECK_FALSE(f.gate.poll_next());
  f.gate.resume_channel(0);
  CHECK_FALSE(f.gate.is_blocked(0));
  CHECK(f.gate_woken == woken + 1);
  order.clear();
  while (auto next = f.gate.poll_next())
    order.push_back(next->channel);
  CHECK(order == std::vector<std::size_t>{0, 0});
  // Resuming a channel that is not held changes nothing.
  f.gate.resume_channel(1);
  CHECK_FALSE(f.gate.poll_next());
}
