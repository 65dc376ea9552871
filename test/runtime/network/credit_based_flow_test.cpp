#include "network_test_util.hpp"

#include "runtime/network/credit_based_view.hpp"
#include "runtime/network/input_gate.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/remote_input_channel.hpp"
#include "runtime/network/result_partition.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using flint::network::test::make_record;

namespace {

/// One producer subpartition and one consumer gate with a single remote channel, joined by a
/// hand-driven "transport" that moves buffer_responses one way and add_credits the other, and
/// checks the flow-control invariants after every message.
struct credit_harness {
  network_config config;
  std::shared_ptr<network_buffer_pool> global;
  std::shared_ptr<result_partition> partition;
  input_gate gate;
  remote_input_channel* channel = nullptr;
  std::unique_ptr<credit_based_view> sender;
  record_deserializer deserializer;

  std::size_t granted = 0;
  std::size_t max_held_by_consumer = 0;
  bool data_available = false;
  bool credit_available = false;
  std::vector<std::string> received;
  bool ended = false;

  explicit credit_harness(std::size_t producer_pool_max)
    : config(small_config()),
      global(network_buffer_pool::make(256, config.segment_size)),
      partition(std::make_shared<result_partition>(
        test::partition_id(1, 0), 1,
        *global->create_buffer_pool(config.partition_pool_min(1), producer_pool_max))),
      gate(0, *global->create_buffer_pool(0, config.floating_buffers_per_gate)) {
    auto remote =
      std::make_unique<remote_input_channel>(input_channel_id{0, 0}, 0, partition->id(), 0, global,
                                             gate.floating_pool(), config.buffers_per_channel);
    channel = remote.get();
    channel->set_credit_listener([this] { credit_available = true; });
    gate.add_channel(std::move(remote));
    REQUIRE(gate.setup());
    REQUIRE(gate.request_partitions());
    // The producer's TaskExecutor answers the partition request.
    auto request = channel->partition_request();
    CHECK(request.initial_credit == 2);
    auto view =
      partition->create_subpartition_view(request.subpartition, [this] { data_available = true; });
    REQUIRE(view);
    sender = std::make_unique<credit_based_view>(request.channel, std::move(*view),
                                                 request.initial_credit);
    granted = request.initial_credit;
  }

  static network_config small_config() {
    network_config c;
    c.segment_size = 64;
    return c;
  }

  std::size_t budget() const {
    return config.buffers_per_channel + config.floating_buffers_per_gate;
  }

  void check_invariants() {
    // Never more data buffers sent than credit granted.
    REQUIRE(sender->data_buffers_sent() <= granted);
    // What the consumer holds stays within exclusive + floating.
    auto held = channel->num_queued() + (deserializer.has_buffer() ? 1 : 0);
    max_held_by_consumer = std::max(max_held_by_consumer, held);
    REQUIRE(held <= budget());
    REQUIRE(gate.floating_pool()->num_requested() <= config.floating_buffers_per_gate);
  }

  void send_credit() {
    while (auto credit = channel->take_unannounced_credit()) {
      sender->on_add_credit(*credit);
      granted += credit->credit;
    }
    credit_available = false;
  }

  /// Delivers one response if the sender may send; false if it may not.
  bool send_one() {
    auto response = sender->next_response();
    if (!response)
      return false;
    auto ok = channel->on_buffer(std::move(*response));
    REQUIRE_MESSAGE(ok, (ok ? "" : ok.error().to_string()));
    check_invariants();
    return true;
  }

  /// Moves messages both ways until neither side has anything to send.
  void pump() {
    for (;;) {
      send_credit();
      bool moved = false;
      while (send_one())
        moved = true;
      if (!moved && channel->unannounced_credit() == 0)
        return;
    }
  }

  /// The consuming task: takes up to `max_buffers` buffers from the gate and reads their records.
  void consume(std::size_t max_buffers) {
    for (std::size_t i = 0; i < max_buffers; ++i) {
      auto next = gate.poll_next();
      if (!next)
        return;
      if (next->is_event()) {
        CHECK(next->buf.kind() == buffer_kind::end_of_partition);
        ended = true;
        continue;
      }
      deserializer.set_next_buffer(std::move(next->buf));
      check_invariants();
      std::span<const char> record;
      while (deserializer.next_record(record) == deserialization_result::record)
        received.emplace_back(record.begin(), record.end());
    }
  }
};

} // namespace

TEST_CASE(
  "a producer never sends more buffers than credits granted, backlog drives floating buffers") {
  credit_harness h{40};
  // 60-byte records fill one 64-byte buffer each.
  std::vector<std::string> records;
  for (std::size_t i = 0; i < 20; ++i) {
    records.push_back(make_record(i, 60));
    REQUIRE(h.partition->emit_record(records.back(), 0) == emit_result::written);
  }
  CHECK(h.data_available);
  CHECK(h.sender->credits() == 2);

  // First response: into an exclusive buffer; its backlog of 19 makes the channel borrow
  // floating buffers up to backlog + initial credit, capped by the gate's 8.
  REQUIRE(h.send_one());
  CHECK(h.channel->manager().num_required() == 19 + 2);
  CHECK(h.channel->manager().num_floating_available() == 8);
  CHECK(h.channel->manager().num_exclusive_available() == 1);
  CHECK(h.channel->manager().is_waiting_for_floating_buffers());
  CHECK(h.credit_available);
  CHECK(h.channel->unannounced_credit() == 8);

  // The second uses the last initial credit; then the producer must wait.
  REQUIRE(h.send_one());
  CHECK(h.sender->credits() == 0);
  CHECK_FALSE(h.sender->is_available());
  CHECK_FALSE(h.send_one());
  CHECK(h.sender->data_buffers_sent() == 2);

  // Announcing the credit lets exactly eight more through: 10 = exclusive + floating.
  h.send_credit();
  CHECK(h.sender->credits() == 8);
  while (h.send_one()) {
  }
  CHECK(h.sender->data_buffers_sent() == 10);
  CHECK(h.channel->num_queued() == 10);
  CHECK(h.partition->subpartition(0).backlog() == 10);

  // The consumer frees one buffer at a time; each frees one credit and lets one more through.
  for (std::size_t step = 0; step < 10; ++step) {
    h.consume(1);
    h.pump();
    CHECK(h.sender->data_buffers_sent() == 11 + step);
  }
  std::size_t guard = 0;
  while (!h.ended || h.received.size() < records.size()) {
    REQUIRE(guard++ < 1000);
    h.consume(1);
    h.pump();
    if (h.sender->data_buffers_sent() == 20 && !h.partition->is_finished())
      h.partition->finish();
    if (h.gate.is_finished())
      break;
  }
  CHECK(h.received == records);
  CHECK(h.gate.is_finished());
  CHECK(h.max_held_by_consumer == 10);
}

TEST_CASE(
  "a slow consumer keeps buffers in flight within budget and nothing is lost when it resumes") {
  credit_harness h{network_config{}.partition_pool_max(1)};
  test::rng random;
  std::vector<std::string> records;
  for (std::size_t i = 0; i < 3000; ++i) {
    auto size = random.below(20) == 0 ? 300 + random.below(400) : random.below(120);
    records.push_back(make_record(i, size));
  }

  std::size_t next_record = 0;
  bool blocked = false;
  bool woken = false;
  std::size_t times_blocked = 0;
  auto produce = [&](std::size_t count) {
    if (blocked) {
      if (!woken)
        return;
      woken = false;
      if (h.partition->resume() == emit_result::blocked) {
        if (!h.partition->notify_when_available([&] { woken = true; }))
          woken = true;
        return;
      }
      blocked = false;
    }
    for (std::size_t k = 0; k < count && next_record < records.size(); ++k) {
      if (h.partition->emit_record(records[next_record++], 0) == emit_result::blocked) {
        blocked = true;
        ++times_blocked;
        if (!h.partition->notify_when_available([&] { woken = true; }))
          woken = true;
        return;
      }
    }
  };

  bool finished = false;
  std::size_t step = 0;
  for (; !h.gate.is_finished(); ++step) {
    REQUIRE(step < 200000);
    produce(5);
    if (step % 4 == 0)
      h.partition->flush_all(); // the buffer timeout firing
    if (!finished && !blocked && next_record == records.size()) {
      h.partition->finish();
      finished = true;
    }
    h.pump();
    // Slow for the first half (one buffer every third step, never releasing in between), then
    // the consumer catches up.
    if (h.received.size() < records.size() / 2) {
      if (step % 3 == 0)
        h.consume(1);
    } else {
      h.consume(100);
    }
  }
  CHECK(times_blocked > 0); // the producer did wait for the consumer
  CHECK(h.max_held_by_consumer == h.budget());
  CHECK(h.received.size() == records.size());
  CHECK(h.received == records);
  CHECK(h.ended);
  // Every buffer is back in its pool.
  CHECK(h.partition->pool()->num_in_use() == 0);
  CHECK(h.gate.floating_pool()->num_in_use() == 0);
}

TEST_CASE("a response out of sequence or without credit is refused") {
  credit_harness h{40};
  auto data = [&](std::uint64_t sequence) {
    auto b = buffer::unpooled(64);
    b.set_size(8);
    return buffer_response{{0, 0}, std::move(b), 0, sequence};
  };
  auto skipped = h.channel->on_buffer(data(1));
  REQUIRE_FALSE(skipped);
  CHECK(skipped.error().code == errc::illegal_state);
  CHECK(skipped.error().message.find("expected sequence 0, got 1") != std::string::npos);

  // Two exclusive credits; with nothing consumed and no backlog announced, a third has no buffer.
  REQUIRE(h.channel->on_buffer(data(0)));
  REQUIRE(h.channel->on_buffer(data(1)));
  // Backlog 0 still keeps the initial credit ready: each exclusive buffer used is replaced by a
  // floating one (Flink's backlog + initial credit rule).
  CHECK(h.channel->manager().num_floating_available() == 1);
  CHECK(h.channel->manager().num_exclusive_available() == 1);
  CHECK(h.gate.floating_pool()->num_requested() == 2);
  REQUIRE(h.channel->on_buffer(data(2)));
  REQUIRE(h.channel->on_buffer(data(3)));
  CHECK(h.gate.floating_pool()->num_requested() == 4);
  while (h.channel->manager().num_available() > 0)
    REQUIRE(h.channel->on_buffer(data(h.channel->expected_sequence())));
  auto no_credit = h.channel->on_buffer(data(h.channel->expected_sequence()));
  REQUIRE_FALSE(no_credit);
  CHECK(no_credit.error().message.find("without credit") != std::string::npos);
}

TEST_CASE("end-of-partition passes without credit and finishes the gate") {
  credit_harness h{40};
  h.sender->release();
  auto view = h.partition->create_subpartition_view(0, [] {});
  credit_based_view no_credit{{0, 0}, std::move(*view), 0};
  h.partition->finish();
  REQUIRE(no_credit.is_available());
  CHECK_FALSE(no_credit.is_finished());
  auto response = no_credit.next_response();
  REQUIRE(response);
  CHECK(response->buf.kind() == buffer_kind::end_of_partition);
  CHECK(no_credit.is_finished());
  CHECK_FALSE(no_credit.next_response());
  REQUIRE(h.channel->on_buffer(std::move(*response)));
  auto next = h.gate.poll_next();
  REQUIRE(next);
  CHECK(next->is_event());
  CHECK(h.gate.is_finished());
  CHECK(h.channel->is_released());
}

TEST_CASE("releasing a remote channel returns exclusive buffers to the global pool") {
  credit_harness h{40};
  auto before = h.global->available_segments();
  auto b = buffer::unpooled(64);
  b.set_size(10);
  REQUIRE(h.channel->on_buffer(buffer_response{{0, 0}, std::move(b), 3, 0}));
  auto held = h.gate.poll_next();
  REQUIRE(held);
  h.gate.release();
  CHECK(h.channel->is_released());
  // The buffer the task still holds goes back to the global pool when it lets go.
  held.reset();
  CHECK(h.global->available_segments() == before + 2);
  CHECK(h.global->required_segments() == h.config.partition_pool_min(1));
}

namespace {

/// Runs `records` one per buffer through a harness whose transport sends credit the moment the
/// channel's credit listener fires (as remote_channel_client does) and carries at most two
/// buffers per step (the rest is "in flight"), while the consumer reads up to `reads_per_step`
/// buffers each step. Returns the add_credit messages sent.
std::size_t run_listener_driven(credit_harness& h, const std::vector<std::string>& records,
                                std::size_t reads_per_step = 100) {
  std::size_t credit_messages = 0;
  h.channel->set_credit_listener([&] {
    if (auto credit = h.channel->take_unannounced_credit()) {
      h.sender->on_add_credit(*credit);
      h.granted += credit->credit;
      ++credit_messages;
    }
  });
  std::size_t guard = 0;
  while (!h.gate.is_finished()) {
    REQUIRE(guard++ < 10000);
    for (int i = 0; i < 2 && h.send_one(); ++i) {
    }
    if (h.sender->data_buffers_sent() == records.size() && !h.partition->is_finished())
      h.partition->finish();
    h.consume(reads_per_step);
    // Never a stall: the producer without credit while the consumer holds free buffers back.
    REQUIRE_FALSE((h.sender->credits() == 0 && h.channel->unannounced_credit() > 0));
  }
  CHECK(h.received == records);
  CHECK(h.max_held_by_consumer <= h.budget());
  CHECK(h.sender->data_buffers_sent() <= h.granted);
  return credit_messages;
}

} // namespace

TEST_CASE("a consumer that keeps up announces credit as often in batches as one by one, and "
          "never stalls the producer") {
  std::vector<std::string> records;
  for (std::size_t i = 0; i < 30; ++i)
    records.push_back(make_record(i, 60));
  auto run = [&](std::size_t batch) {
    credit_harness h{40};
    h.channel->set_credit_batch(batch);
    for (auto& r : records)
      REQUIRE(h.partition->emit_record(r, 0) == emit_result::written);
    return run_listener_driven(h, records);
  };
  // It reads all it has each step: holding credit back would only shrink what the producer may
  // send while the consumer waits. One add_credit per freed buffer, minus the initial credit and
  // the floating buffers borrowed in one go.
  auto one_by_one = run(1);
  auto batched = run(4);
  CHECK(one_by_one >= 10);
  CHECK(batched == one_by_one);
  MESSAGE("add_credit messages: " << one_by_one << " one by one, " << batched
                                  << " in batches of 4");
}

TEST_CASE("credit held back for a batch goes out once the producer's credit runs low") {
  credit_harness h{40};
  h.channel->set_credit_batch(4);
  for (std::size_t i = 0; i < 30; ++i)
    REQUIRE(h.partition->emit_record(make_record(i, 60), 0) == emit_result::written);
  // Fill the budget: 2 initial credits, then the 8 floating buffers the backlog asks for.
  h.pump();
  CHECK(h.sender->credits() == 0);
  CHECK(h.channel->num_queued() == 10);
  // The producer has no credit left: the first freed buffer is announced at once.
  h.credit_available = false;
  h.consume(1);
  CHECK(h.credit_available);
  CHECK(h.channel->unannounced_credit() == 1);
  h.send_credit();
  CHECK(h.sender->credits() == 1);
}

TEST_CASE("a consumer that has read everything it received announces its credit at once, "
          "batched or not") {
  credit_harness h{40};
  h.channel->set_credit_batch(4);
  for (std::size_t i = 0; i < 30; ++i)
    REQUIRE(h.partition->emit_record(make_record(i, 60), 0) == emit_result::written);
  h.pump();
  REQUIRE(h.channel->num_queued() == 10);
  // Read four buffers, announcing whatever the rule lets out: the producer now holds credit.
  for (int i = 0; i < 4; ++i) {
    h.consume(1);
    if (h.credit_available)
      h.send_credit();
  }
  REQUIRE(h.sender->credits() >= 4);
  // Read the rest while the producer still holds a batch of credit: buffers freed while others
  // wait in the queue are batched, the one that empties the queue sends everything held back.
  std::size_t announced_while_queued = 0;
  while (h.channel->num_queued() > 0) {
    h.consume(1);
    if (h.channel->num_queued() > 0 && h.credit_available) {
      ++announced_while_queued;
      h.send_credit();
    }
  }
  CHECK(h.credit_available);
  CHECK(h.channel->unannounced_credit() > 0);
  h.send_credit();
  CHECK(h.channel->unannounced_credit() == 0);
  CHECK(announced_while_queued <= 1);
}

TEST_CASE("received memory of a full buffer becomes a credited buffer's, within the budget") {
  credit_harness h{40};
  auto segments_before = h.global->available_segments();
  std::vector<char> full(h.config.segment_size, 'f');
  const char* memory = full.data();
  REQUIRE(h.channel->on_received(0, 0, buffer_kind::data, std::move(full)));
  std::vector<char> partial(10, 'p');
  REQUIRE(h.channel->on_received(1, 0, buffer_kind::data, std::move(partial)));
  // Every received buffer takes a credited buffer's place, adopted or copied: once the credit is
  // used up the next is refused with its sequence, and nothing beyond the budget is queued.
  std::uint64_t sequence = 2;
  expected<unit> accepted = unit{};
  while (accepted && sequence < 100)
    accepted = h.channel->on_received(sequence++, 0, buffer_kind::data,
                                      std::vector<char>(h.config.segment_size, 'x'));
  REQUIRE_FALSE(accepted);
  CHECK(accepted.error().message.find("without credit") != std::string::npos);
  CHECK(h.channel->num_queued() <= h.budget());
  {
    auto first = h.gate.poll_next();
    REQUIRE(first);
    CHECK(first->buf.data() == memory);
    CHECK(first->buf.size() == h.config.segment_size);
    CHECK(std::string(first->buf.data(), first->buf.size())
          == std::string(h.config.segment_size, 'f'));
    auto second = h.gate.poll_next();
    REQUIRE(second);
    CHECK(std::string(second->buf.data(), second->buf.size()) == "pppppppppp");
  }
  // The rest read too: the channel holds its budget again, the received memory among it, and
  // gives every segment back to the global pool on release.
  while (h.gate.poll_next()) {
  }
  CHECK(h.channel->num_available_buffers() >= h.config.buffers_per_channel);
  h.gate.release();
  CHECK(h.global->available_segments() == segments_before + 2);
}

TEST_CASE("a buffer's segment is exchanged only for one of its size") {
  auto b = buffer::unpooled(16);
  b.set_size(16);
  std::vector<char> bytes(16, 'e');
  const char* memory = bytes.data();
  auto old = b.exchange_segment(memory_segment::adopt(std::move(bytes)));
  CHECK(old.size() == 16);
  CHECK(b.data() == memory);
  CHECK(b.size() == 0);
  CHECK_THROWS_AS(b.exchange_segment(memory_segment{8}), std::logic_error);
  CHECK_FALSE(memory_segment::adopt(std::vector<char>{}));
  // A moved segment keeps the adopted memory where it was.
  auto moved = b.take_segment();
  CHECK(moved.data() == memory);
}

TEST_CASE("data arriving as bytes is copied once into a credited buffer") {
  credit_harness h{40};
  std::string payload = "0123456789";
  REQUIRE(h.channel->on_bytes(0, 0, buffer_kind::data,
                              std::span<const char>{payload.data(), payload.size()}));
  CHECK(h.channel->manager().num_exclusive_available() == 1);
  auto wrong = h.channel->on_bytes(5, 0, buffer_kind::data,
                                   std::span<const char>{payload.data(), payload.size()});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message.find("expected sequence 1, got 5") != std::string::npos);
  std::string too_big(h.config.segment_size + 1, 'x');
  auto big = h.channel->on_bytes(1, 0, buffer_kind::data,
                                 std::span<const char>{too_big.data(), too_big.size()});
  REQUIRE_FALSE(big);
  CHECK(big.error().code == errc::invalid_argument);
  REQUIRE(h.channel->on_bytes(1, 0, buffer_kind::end_of_partition, {}));
  auto first = h.gate.poll_next();
  REQUIRE(first);
  REQUIRE(first->buf.is_data());
  CHECK(std::string(first->buf.data(), first->buf.size()) == payload);
  // The bytes live in the channel's own (exclusive) buffer, not in memory outside the budget.
  CHECK(first->buf.recycler() != nullptr);
  auto end = h.gate.poll_next();
  REQUIRE(end);
  CHECK(end->buf.kind() == buffer_kind::end_of_partition);
}
