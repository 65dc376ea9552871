// The CAF transport of remote channels in one actor system on CAF's deterministic scheduler:
// every message is handled when the test says so, so the credit bound is checked after each one.

#include "transport_test_util.hpp"

#include "runtime/network/bounded_blocking_subpartition.hpp"
#include "runtime/network/memory_budget.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/result_partition.hpp"
#include "runtime/network/result_partition_manager.hpp"
#include "runtime/network/transport/partition_request_server.hpp"
#include "test/support/test_fixture.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/send.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;
using namespace flint::network::transport;
using namespace std::chrono_literals;
using flint::network::transport::test::consumer_side;
using flint::network::transport::test::make_record;

namespace {

result_partition_id partition_id(std::uint64_t data_set, std::int32_t number) {
  return result_partition_id{graph::intermediate_data_set_id{7, data_set}, number};
}

/// A directory of this test's own (mkdtemp), removed with what the test put in it.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "flint_transport_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct transport_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  caf::scheduler::test_coordinator& sched =
    dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  network_config config;
  std::shared_ptr<network_buffer_pool> producer_global =
    network_buffer_pool::make(64, config.segment_size);
  result_partition_manager manager;
  std::shared_ptr<server_stats> stats = std::make_shared<server_stats>();
  caf::actor server;
  std::vector<caf::actor> actors;
  std::size_t max_in_flight = 0;

  explicit transport_fixture(bool always_copy = false) {
    server = spawn_partition_request_server(
      sys, manager, server_options{.always_copy = always_copy, .stats = stats, .on_consumed = {}});
    actors.push_back(server);
    sched.run();
  }

  ~transport_fixture() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
    sched.clock().cancel_all();
    sched.run();
    manager.release_all();
  }

  std::shared_ptr<result_partition> make_partition(result_partition_id id) {
    auto pool = producer_global->create_buffer_pool(config.partition_pool_min(1),
                                                    config.partition_pool_max(1));
    REQUIRE(pool);
    auto p = std::make_shared<result_partition>(id, 1, *pool);
    REQUIRE(manager.register_partition(p));
    return p;
  }

  caf::actor start_consumer(consumer_side& side) {
    auto a = flint::network::transport::test::spawn_consumer(sys, side, server);
    actors.push_back(a);
    return a;
  }

  std::size_t budget() const {
    return config.buffers_per_channel + config.floating_buffers_per_gate;
  }

  /// Handles messages one by one, checking after each that the data buffers the producer sent and
  /// the consumer did not release yet stay within exclusive + floating.
  void run_checked(consumer_side& side) {
    while (sched.try_run_once()) {
      auto in_flight = stats->data_buffers_sent.load() - side.released();
      REQUIRE(in_flight <= budget());
      max_in_flight = std::max<std::size_t>(max_in_flight, in_flight);
      // + 1: end-of-partition is queued too, and events pass without credit.
      REQUIRE(side.held() <= budget() + 1);
    }
  }
};

using flint::network::transport::test::record_size;

/// A producer writing `n` records while a consumer reads one buffer per step.
void slow_consumer_run(bool always_copy) {
  transport_fixture f{always_copy};
  auto id = partition_id(1, 0);
  auto partition = f.make_partition(id);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  std::vector<std::string> received;
  side.on_record = [&](std::span<const char> r) { received.emplace_back(r.begin(), r.end()); };
  f.start_consumer(side);
  f.run_checked(side);
  CHECK(f.stats->active_readers == 1);

  const std::size_t n = 300;
  std::size_t blocked = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto r = partition->emit_record(make_record(i, record_size(i)), 0);
    // Backpressure: the consumer reads one buffer at a time until the producer can go on.
    while (r == emit_result::blocked) {
      ++blocked;
      f.run_checked(side);
      side.consume(1);
      f.run_checked(side);
      if (partition->is_available())
        r = partition->resume();
    }
    f.run_checked(side);
  }
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(1) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(blocked > 0);
  // The slow consumer let the producer use its whole credit, and never more.
  CHECK(f.max_in_flight == f.budget());
  REQUIRE(received.size() == n);
  for (std::size_t i = 0; i < n; ++i)
    REQUIRE(received[i] == make_record(i, record_size(i)));
  f.run_checked(side);
  // The view is dropped after end-of-partition.
  CHECK(f.stats->active_readers == 0);
  CHECK(f.stats->events_sent == 1);
}

} // namespace

TEST_CASE(
  "a slow consumer: credit bounds the buffers in flight, records arrive in order, then end-of-partition") {
  SUBCASE("same process: buffers handed over without copying") {
    slow_consumer_run(false);
  }
  SUBCASE("wire form: bytes as across processes") {
    slow_consumer_run(true);
  }
}

TEST_CASE("a checkpoint barrier crosses with its id and timestamp, between the records around it") {
  for (bool copy : {false, true}) {
    CAPTURE(copy);
    transport_fixture f{copy};
    auto id = partition_id(2, 1);
    auto partition = f.make_partition(id);
    consumer_side side{f.config, id, 0};
    f.start_consumer(side);
    f.sched.run();
    for (std::size_t i = 0; i < 3; ++i)
      REQUIRE(partition->emit_record(make_record(i, 10), 0) == emit_result::written);
    REQUIRE(partition->broadcast_checkpoint_barrier({9, 777}));
    REQUIRE(partition->emit_record(make_record(3, 10), 0) == emit_result::written);
    partition->finish();
    f.run_checked(side);
    REQUIRE_FALSE(side.failure);
    CHECK(side.ended);
    REQUIRE(side.barriers.size() == 1);
    CHECK(side.barriers[0].first == checkpoint_barrier{9, 777});
    CHECK(side.barriers[0].second == 3);
    CHECK(side.records == 4);
    CHECK(f.stats->events_sent == 2); // the barrier and end-of-partition
  }
}

TEST_CASE("a record larger than one buffer crosses intact") {
  for (bool copy : {false, true}) {
    transport_fixture f{copy};
    auto id = partition_id(2, 0);
    auto partition = f.make_partition(id);
    consumer_side side{f.config, id, 0};
    std::vector<std::string> received;
    side.on_record = [&](std::span<const char> r) { received.emplace_back(r.begin(), r.end()); };
    f.start_consumer(side);
    f.sched.run();
    // 200 KB spans 7 buffers; the pool (at most 10) and the credit (2 + 8) let it through while
    // the consumer reads as buffers arrive.
    auto big = make_record(42, 200 * 1000);
    auto r = partition->emit_record(big, 0);
    while (r == emit_result::blocked) {
      f.run_checked(side);
      REQUIRE(partition->is_available());
      r = partition->resume();
    }
    REQUIRE(partition->emit_record(make_record(43, 10), 0) == emit_result::written);
    partition->finish();
    f.run_checked(side);
    REQUIRE_FALSE(side.failure);
    CHECK(side.ended);
    REQUIRE(received.size() == 2);
    CHECK(received[0] == big);
    CHECK(received[1] == make_record(43, 10));
  }
}

TEST_CASE(
  "an unknown partition gets a clear error, the consumer retries with back-off until it appears") {
  transport_fixture f;
  auto id = partition_id(3, 5);
  consumer_side side{f.config, id, 0};
  f.start_consumer(side);
  f.sched.run();
  REQUIRE(side.partition_errors.size() == 1);
  auto& text = side.partition_errors[0];
  CHECK(text.find(to_string(id)) != std::string::npos);
  CHECK(text.find("refused") != std::string::npos);
  CHECK_FALSE(side.failure);
  CHECK(f.stats->refused_requests == 1);

  // Flink's back-off: the first retry 100 ms later, the next 200 ms after that.
  f.sched.advance_time(99ms);
  f.sched.run();
  CHECK(side.client->requests_sent() == 1);
  f.sched.advance_time(1ms);
  f.sched.run();
  CHECK(side.client->requests_sent() == 2);
  REQUIRE(side.partition_errors.size() == 2);

  // The producer registers meanwhile: the next retry succeeds.
  auto partition = f.make_partition(id);
  REQUIRE(partition->emit_record(make_record(1, 10), 0) == emit_result::written);
  partition->finish();
  f.sched.advance_time(200ms);
  f.sched.run();
  CHECK(side.client->requests_sent() == 3);
  CHECK_FALSE(side.failure);
  CHECK(side.ended);
  CHECK(side.records == 1);
}

TEST_CASE(
  "a partition that never appears fails the channel after the back-off reaches its maximum") {
  transport_fixture f;
  consumer_side side{f.config, partition_id(4, 0), 0};
  f.start_consumer(side);
  f.sched.run();
  for (int i = 0; i < 20 && !side.failure; ++i) {
    f.sched.advance_time(10s);
    f.sched.run();
  }
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::not_found);
  CHECK(side.failure->message.find("gave up") != std::string::npos);
  // 100, 200, ..., 6400 ms: 7 retries after the first request.
  CHECK(side.client->requests_sent() == 8);
}

TEST_CASE(
  "across processes a sent buffer is back in the producer's pool at once, while the consumer has "
  "not read it; each carries the backlog behind it") {
  // The wire form: the server copies each buffer into the message.
  transport_fixture f{true};
  auto id = partition_id(4, 0);
  auto partition = f.make_partition(id);
  // The writer fills its whole pool before the consumer asks: 10 buffers queued, none free.
  std::size_t i = 0;
  while (partition->emit_record(make_record(i, 1000), 0) == emit_result::written)
    ++i;
  const auto pool_size = f.config.partition_pool_max(1);
  REQUIRE(partition->pool()->num_requested() == pool_size);
  REQUIRE(partition->pool()->num_available() == 0);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  f.start_consumer(side);
  // Handle the request only: the server sends what the initial credit (the exclusive buffers)
  // allows, in one turn.
  while (f.stats->data_buffers_sent == 0 && f.sched.try_run_once()) {
  }
  const auto credit = f.config.buffers_per_channel;
  REQUIRE(f.stats->data_buffers_sent == credit);
  CHECK(f.stats->sending_turns == 1);
  // Not held until the consumer reads them or grants more credit.
  CHECK(partition->pool()->num_available() == credit);
  // The turn ended with data queued and no credit: both carry the backlog the turn started with
  // (pool_size - 1 behind the first), not pool_size - 1, pool_size - 2.
  CHECK(f.stats->credit_stalls == 1);
  CHECK(f.stats->backlog_sent == 2 * (pool_size - 1));
  REQUIRE(partition->is_available());
  CHECK(partition->resume() == emit_result::written);
  // The rest still crosses intact.
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(1) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(side.records == i + 1);
}

namespace {

/// The backlog of the buffer message at the head of `consumer`'s mailbox, if that is one.
std::optional<std::uint64_t> head_backlog(const caf::actor& consumer) {
  auto* self = dynamic_cast<caf::scheduled_actor*>(caf::actor_cast<caf::abstract_actor*>(consumer));
  REQUIRE(self != nullptr);
  auto* head = self->mailbox().peek();
  if (head == nullptr || !is_message<buffer_message>(head->content()))
    return std::nullopt;
  auto message = from_message<buffer_message>(head->content());
  REQUIRE(message);
  return message->backlog;
}

/// Steps until `consumer` has a message at the head of its mailbox and is the next job.
bool run_until_next_is(transport_fixture& f, const caf::actor& consumer) {
  auto* target = caf::actor_cast<caf::abstract_actor*>(consumer);
  for (int i = 0; i < 100; ++i) {
    if (!f.sched.jobs.empty() && f.sched.jobs.front() == dynamic_cast<caf::resumable*>(target))
      return true;
    if (!f.sched.try_run_once())
      return false;
  }
  return false;
}

/// Runs until `n` more buffer messages reached `consumer` (or nothing is left to run), appending
/// each one's backlog as it arrives; returns how many came.
std::size_t collect_backlogs(transport_fixture& f, const caf::actor& consumer,
                             std::vector<std::uint64_t>& backlogs, std::size_t n) {
  std::size_t got = 0;
  while (got < n && run_until_next_is(f, consumer)) {
    if (auto b = head_backlog(consumer)) {
      backlogs.push_back(*b);
      ++got;
    }
    f.sched.run_once();
  }
  return got;
}

/// A registered partition of one subpartition, its producer's pool 2 to 20 buffers (more than
/// the consumer's whole budget), written until the pool holds the producer up; the record it
/// could not write waits in the partition.
struct held_up {
  std::shared_ptr<local_buffer_pool> pool;
  std::shared_ptr<result_partition> partition;
  std::size_t records = 0; ///< written
};

held_up held_up_producer(transport_fixture& f, const result_partition_id& id) {
  auto pool = f.producer_global->create_buffer_pool(2, 20);
  REQUIRE(pool);
  auto partition = std::make_shared<result_partition>(id, 1, *pool);
  REQUIRE(f.manager.register_partition(partition));
  std::size_t records = 0;
  while (partition->emit_record(make_record(records, 1000), 0) == emit_result::written)
    ++records;
  return {*pool, partition, records};
}

} // namespace

TEST_CASE("a sending turn that ends without credit carries the backlog it started with on every "
          "buffer, so the consumer keeps its window") {
  transport_fixture f{true};
  auto id = partition_id(6, 0);
  auto partition = f.make_partition(id);
  std::size_t i = 0;
  while (partition->emit_record(make_record(i, 1000), 0) == emit_result::written)
    ++i;
  const auto queued = partition->subpartition(0).backlog();
  REQUIRE(queued > f.config.buffers_per_channel);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  // The request's turn sends the two buffers the exclusive credit allows; both carry
  // queued - 1 (before: queued - 1, then queued - 2).
  std::vector<std::uint64_t> backlogs;
  collect_backlogs(f, consumer, backlogs, f.config.buffers_per_channel);
  REQUIRE(backlogs.size() == f.config.buffers_per_channel);
  CHECK(f.stats->sending_turns == 1);
  CHECK(f.stats->credit_stalls == 1);
  for (auto b : backlogs)
    CHECK(b == queued - 1);
  // The consumer holds both and tops its free buffers up to the first backlog + 2, within the
  // gate's floating buffers.
  CHECK(side.channel->num_queued() == 2);
  CHECK(side.channel->num_available_buffers()
        == std::min(queued - 1 + f.config.buffers_per_channel, f.config.floating_buffers_per_gate));
  auto arrivals = side.channel->stats();
  CHECK(arrivals.data_buffers == 2);
  CHECK(arrivals.backlog == 2 * (queued - 1));
  // The initial credit (2) was outstanding at the first arrival.
  CHECK(arrivals.outstanding >= 2);
}

TEST_CASE("a credit-stalled turn carries the highest backlog a stalled turn of its reader started "
          "with, until a turn empties the queue") {
  // A task woken once half its pool is back lets its queue sink before it refills: the window
  // the consumer keeps (backlog + 2) should follow the queue's high mark, not the dip.
  transport_fixture f{true};
  auto id = partition_id(8, 0);
  // A pool larger than the consumer's whole budget, so that the second turn stalls too.
  auto [pool, partition, records] = held_up_producer(f, id);
  // Held up by its pool, the producer waits to be woken, as a stream task does.
  bool woken = false;
  REQUIRE(partition->notify_when_available([&woken] { woken = true; }));
  const auto queued = partition->subpartition(0).backlog();
  const auto exclusive = f.config.buffers_per_channel;
  const auto floating = f.config.floating_buffers_per_gate;
  REQUIRE(queued > exclusive + floating + 1);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  // The request's turn: the exclusive credit, both stamped queued - 1. The first arrival asks
  // for queued - 1 + 2 free buffers and gets the gate's floating ones, announced at once; the
  // second turn sends them and ends stalled again, having started with queued - 3 behind.
  std::vector<std::uint64_t> backlogs;
  collect_backlogs(f, consumer, backlogs, exclusive + floating);
  REQUIRE(backlogs.size() == exclusive + floating);
  CHECK(f.stats->sending_turns == 2);
  CHECK(f.stats->credit_stalls == 2);
  // Before: queued - 1 twice, then queued - 3 on the second turn's buffers.
  for (auto b : backlogs)
    CHECK(b == queued - 1);
  f.sched.run();
  CHECK(side.channel->num_queued() == exclusive + floating);

  // The consumer reads everything and the rest of the queue goes out; once a turn empties the
  // queue the mark is forgotten.
  while (partition->subpartition(0).backlog() > 0 || side.channel->num_queued() > 0) {
    f.run_checked(side);
    if (side.consume(100) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE(partition->subpartition(0).backlog() == 0);
  REQUIRE(partition->is_available());
  REQUIRE(partition->resume() == emit_result::written);
  ++records;
  f.run_checked(side);
  side.consume(100);
  f.run_checked(side);
  // The consumer's free buffers are its exclusive ones again (the backlog it last saw was 0).
  REQUIRE(side.channel->num_available_buffers() == exclusive);
  const auto sent_before = f.stats->data_buffers_sent.load();
  const auto stalls_before = f.stats->credit_stalls.load();
  // About five more buffers, flushed: the turn sends two (the exclusive credit) and stalls,
  // stamping its own first backlog, not the earlier mark.
  for (std::size_t written = 0; written < 5 * f.config.segment_size - 1000; written += 1004)
    REQUIRE(partition->emit_record(make_record(records++, 1000), 0) == emit_result::written);
  partition->flush_all();
  const auto now_queued = partition->subpartition(0).backlog();
  REQUIRE(now_queued > exclusive);
  REQUIRE(now_queued < queued - 1);
  backlogs.clear();
  collect_backlogs(f, consumer, backlogs, exclusive);
  REQUIRE(backlogs.size() == exclusive);
  CHECK(f.stats->data_buffers_sent - sent_before >= exclusive);
  CHECK(f.stats->credit_stalls == stalls_before + 1);
  for (auto b : backlogs)
    CHECK(b == now_queued - 1);
  // Everything still crosses intact.
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(100) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(side.records == records);
}

TEST_CASE("a credit-stalled turn of a producer its pool does not hold up carries its own first "
          "backlog, not the mark") {
  // The mark stands for a producer that waits for buffers and refills its queue once woken.
  // One with buffers to spare has written what it had: a mark kept then would keep the
  // consumer's floating buffers credited to this channel, idle, after the queue drained.
  transport_fixture f{true};
  auto id = partition_id(9, 0);
  auto pool = f.producer_global->create_buffer_pool(2, 30);
  REQUIRE(pool);
  auto partition = std::make_shared<result_partition>(id, 1, *pool);
  REQUIRE(f.manager.register_partition(partition));
  const auto exclusive = f.config.buffers_per_channel;
  const auto floating = f.config.floating_buffers_per_gate;
  std::size_t records = 0;
  while (partition->subpartition(0).backlog() < exclusive + floating + 5)
    REQUIRE(partition->emit_record(make_record(records++, 1000), 0) == emit_result::written);
  partition->flush_all();
  REQUIRE(partition->is_available());
  const auto queued = partition->subpartition(0).backlog();
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  std::vector<std::uint64_t> backlogs;
  collect_backlogs(f, consumer, backlogs, exclusive + floating);
  REQUIRE(backlogs.size() == exclusive + floating);
  CHECK(f.stats->credit_stalls == 2);
  // The request's turn: queued - 1 on both; the second turn started with queued - 3 behind.
  for (std::size_t i = 0; i < backlogs.size(); ++i)
    CHECK(backlogs[i] == (i < exclusive ? queued - 1 : queued - 3));
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(100) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.records == records);
}

TEST_CASE("a credit-stalled turn keeps the mark for a few turns after the one that woke its "
          "producer, then drops it if the producer wrote nothing") {
  // The turn whose releases wake a producer held up by its pool is not the one that sees it
  // write: its wake-up takes a few of the consumer's credit turns, and a mark dropped meanwhile
  // stamped the dip. A producer that stays quiet loses the mark once the grace is used up.
  transport_fixture f{true};
  auto id = partition_id(10, 0);
  auto [pool, partition, records] = held_up_producer(f, id);
  bool woken = false;
  REQUIRE(partition->notify_when_available([&woken] { woken = true; }));
  const auto queued = partition->subpartition(0).backlog();
  const auto exclusive = f.config.buffers_per_channel;
  const auto floating = f.config.floating_buffers_per_gate;
  const auto grace = stalled_mark_grace_turns;
  REQUIRE(queued > exclusive + floating + grace + 2);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  std::vector<std::uint64_t> backlogs;
  auto collect = [&](std::size_t n) { return collect_backlogs(f, consumer, backlogs, n); };
  // The request's turn and the floating credit's both find the producer waiting and carry
  // queued - 1; the second one's releases bring half the pool back, which wakes the producer.
  REQUIRE(collect(exclusive + floating) == exclusive + floating);
  f.sched.run();
  CHECK(f.stats->credit_stalls == 2);
  for (auto b : backlogs)
    CHECK(b == queued - 1);
  // Woken, it has not written (it has not run yet): its pool no longer holds it up.
  REQUIRE(woken);
  REQUIRE_FALSE(pool->has_waiters());
  REQUIRE(pool->is_available());
  // One buffer read at a time: each frees one credit, announced at once (the producer holds
  // none), which lets one buffer out in a stalled turn of its own. For stalled_mark_grace_turns
  // turns the mark stands (before: each carried its own backlog); then each carries its own.
  auto sent = f.stats->data_buffers_sent.load();
  REQUIRE(sent == exclusive + floating);
  for (std::size_t turn = 1; turn <= grace + 2; ++turn) {
    backlogs.clear();
    side.consume(1);
    REQUIRE(collect(1) == 1);
    f.sched.run();
    REQUIRE(f.stats->data_buffers_sent.load() == ++sent);
    CHECK(f.stats->credit_stalls.load() == 2 + turn);
    CHECK(backlogs.front() == (turn <= grace ? queued - 1 : queued - sent));
  }
  // Everything still crosses intact.
  REQUIRE(partition->resume() == emit_result::written);
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(100) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(side.records == records + 1);
}

TEST_CASE("a credit-stalled turn of a producer whose pool is destroyed carries its own backlog") {
  // A destroyed pool is not available, but no producer will refill the queue from it: the mark
  // (and its grace) would only keep the consumer's credit on a channel that is draining.
  transport_fixture f{true};
  auto id = partition_id(11, 0);
  auto [pool, partition, records] = held_up_producer(f, id);
  const auto queued = partition->subpartition(0).backlog();
  const auto exclusive = f.config.buffers_per_channel;
  const auto floating = f.config.floating_buffers_per_gate;
  REQUIRE(queued > exclusive + floating + 3);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  std::vector<std::uint64_t> backlogs;
  auto collect = [&](std::size_t n) { return collect_backlogs(f, consumer, backlogs, n); };
  REQUIRE(collect(exclusive + floating) == exclusive + floating);
  f.sched.run();
  // Held up by its pool: both turns carry the mark.
  for (auto b : backlogs)
    CHECK(b == queued - 1);
  // The producer is gone (its pool destroyed) with buffers still queued.
  pool->destroy();
  REQUIRE_FALSE(pool->is_available());
  auto sent = f.stats->data_buffers_sent.load();
  for (std::size_t turn = 1; turn <= 3; ++turn) {
    backlogs.clear();
    side.consume(1);
    REQUIRE(collect(1) == 1);
    f.sched.run();
    REQUIRE(f.stats->data_buffers_sent.load() == ++sent);
    CHECK(backlogs.front() == queued - sent);
  }
  // The rest of the queue still crosses (the record the producer could not write went with it).
  while (side.consume(100) > 0 || f.sched.has_job())
    f.run_checked(side);
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(f.stats->data_buffers_sent.load() == queued);
}

TEST_CASE("a sending turn that empties the queue carries the exact backlog behind each buffer") {
  transport_fixture f{true};
  auto id = partition_id(7, 0);
  auto partition = f.make_partition(id);
  // One and a half buffers of records, flushed: two data buffers queued, as much as the initial
  // credit.
  std::size_t written = 0;
  for (std::size_t i = 0; written < f.config.segment_size * 3 / 2; ++i) {
    REQUIRE(partition->emit_record(make_record(i, 1000), 0) == emit_result::written);
    written += 1004;
  }
  partition->flush_all();
  REQUIRE(partition->subpartition(0).backlog() == f.config.buffers_per_channel);
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  auto consumer = f.start_consumer(side);
  std::vector<std::uint64_t> backlogs;
  collect_backlogs(f, consumer, backlogs, 2);
  REQUIRE(backlogs.size() == 2);
  CHECK(backlogs[0] == 1);
  CHECK(backlogs[1] == 0);
  CHECK(f.stats->credit_stalls == 0);
  partition->finish();
  while (!side.ended && !side.failure) {
    f.run_checked(side);
    if (side.consume(1) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
}

TEST_CASE("a blocking partition's reader sends what the credit allows in one turn") {
  // Its reader holds two read buffers, which come back only when the server releases what it
  // sent: a server that took a whole turn before releasing anything sent two buffers a turn.
  transport_fixture f{true};
  scratch_dir dir;
  auto budget = std::make_shared<memory_budget>(std::size_t{64} << 20);
  std::vector<std::shared_ptr<result_subpartition>> subpartitions;
  subpartitions.push_back(
    std::make_shared<bounded_blocking_subpartition>(0, dir.path / "p.spill", budget));
  auto id = partition_id(9, 0);
  auto partition = std::make_shared<result_partition>(
    id, std::move(subpartitions), *f.producer_global->create_buffer_pool(2, 4),
    graph::result_partition_type::blocking);
  REQUIRE(f.manager.register_partition(partition));
  const std::size_t n = 40 * 32;
  for (std::size_t i = 0; i < n; ++i)
    REQUIRE(partition->emit_record(make_record(i, 1000), 0) == emit_result::written);
  partition->finish();
  consumer_side side{f.config, id, 0};
  side.auto_consume = false;
  f.start_consumer(side);
  f.sched.run();
  // The exclusive buffers' credit and the floating buffers the first backlog asked for.
  CHECK(f.stats->data_buffers_sent == f.budget());
  CHECK(f.stats->sending_turns <= 2);
  while (!side.ended && !side.failure) {
    f.sched.run();
    if (side.consume(100) == 0 && !f.sched.has_job())
      break;
  }
  REQUIRE_MESSAGE(!side.failure, (side.failure ? side.failure->to_string() : ""));
  CHECK(side.ended);
  CHECK(side.records == n);
}

TEST_CASE("a bad subpartition is refused without retry") {
  transport_fixture f;
  auto id = partition_id(5, 0);
  auto partition = f.make_partition(id);
  consumer_side side{f.config, id, 3};
  f.start_consumer(side);
  f.sched.run();
  REQUIRE(side.failure);
  CHECK(side.failure->code == errc::invalid_argument);
  CHECK(side.client->requests_sent() == 1);
}

TEST_CASE("the server drops a reader when the consumer cancels or dies") {
  transport_fixture f;
  auto id = partition_id(6, 0);
  auto partition = f.make_partition(id);
  {
    consumer_side side{f.config, id, 0};
    f.start_consumer(side);
    f.sched.run();
    CHECK(f.stats->active_readers == 1);
    side.client->cancel();
    f.sched.run();
    CHECK(f.stats->active_readers == 0);
  }
  consumer_side side{f.config, id, 0};
  auto consumer = f.start_consumer(side);
  f.sched.run();
  CHECK(f.stats->active_readers == 1);
  caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
  f.sched.run();
  CHECK(f.stats->active_readers == 0);
}

TEST_CASE(
  "requests name the job: two jobs of one program read their own partitions, an unknown job is retried") {
  caf::actor_system_config cfg;
  caf::actor_system sys{flint::test::deterministic_config(cfg)};
  auto& sched = dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler());
  network_config config;
  auto global = network_buffer_pool::make(64, config.segment_size);
  // Result ids are deterministic per program: both jobs have partition `id`.
  auto id = partition_id(9, 0);
  graph::job_id job_a{1, 1}, job_b{2, 2}, job_c{3, 3};
  std::map<graph::job_id, std::shared_ptr<result_partition_manager>> managers{
    {job_a, std::make_shared<result_partition_manager>()},
    {job_b, std::make_shared<result_partition_manager>()}};
  std::vector<std::shared_ptr<result_partition>> partitions;
  for (auto& [job, manager] : managers) {
    auto pool =
      global->create_buffer_pool(config.partition_pool_min(1), config.partition_pool_max(1));
    REQUIRE(pool);
    auto p = std::make_shared<result_partition>(id, 1, *pool);
    REQUIRE(manager->register_partition(p));
    REQUIRE(p->emit_record(make_record(job.upper(), 10), 0) == emit_result::written);
    p->finish();
    partitions.push_back(p);
  }
  std::vector<std::tuple<graph::job_id, result_partition_id, std::size_t>> consumed;
  server_options options;
  options.on_consumed = [&](const graph::job_id& j, const result_partition_id& p, std::size_t s) {
    consumed.emplace_back(j, p, s);
  };
  auto server = spawn_partition_request_server(
    sys,
    [&](const graph::job_id& j) -> std::shared_ptr<result_partition_manager> {
      auto i = managers.find(j);
      return i == managers.end() ? nullptr : i->second;
    },
    options);
  std::vector<std::string> seen_a, seen_b;
  consumer_side a{config, id, 0, job_a}, b{config, id, 0, job_b}, c{config, id, 0, job_c};
  a.on_record = [&](std::span<const char> r) { seen_a.emplace_back(r.begin(), r.end()); };
  b.on_record = [&](std::span<const char> r) { seen_b.emplace_back(r.begin(), r.end()); };
  std::vector<caf::actor> actors{server,
                                 flint::network::transport::test::spawn_consumer(sys, a, server),
                                 flint::network::transport::test::spawn_consumer(sys, b, server),
                                 flint::network::transport::test::spawn_consumer(sys, c, server)};
  sched.run();
  CHECK(a.ended);
  CHECK(b.ended);
  CHECK(seen_a == std::vector<std::string>{make_record(1, 10)});
  CHECK(seen_b == std::vector<std::string>{make_record(2, 10)});
  // Each finished reader counts its subpartition consumed, for its own job.
  CHECK(consumed.size() == 2);
  for (auto& [j, p, s] : consumed) {
    CHECK((j == job_a || j == job_b));
    CHECK(p == id);
    CHECK(s == 0);
  }
  // Job c has no partitions here (yet): refused as not found, so the consumer retries.
  REQUIRE(c.partition_errors.size() == 1);
  CHECK(c.partition_errors[0].find("job " + job_c.to_string()) != std::string::npos);
  CHECK_FALSE(c.failure);
  // Its consumer gives up the channel: the server counts it consumed though it never served it.
  c.client->cancel();
  sched.run();
  REQUIRE(consumed.size() == 3);
  CHECK(std::get<0>(consumed[2]) == job_c);
  CHECK(std::get<1>(consumed[2]) == id);

  for (auto& actor : actors)
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  sched.run();
  sched.clock().cancel_all();
  sched.run();
  for (auto& [job, manager] : managers)
    manager->release_all();
}

TEST_CASE_FIXTURE(transport_fixture,
                  "a malformed partition request is dropped and the server serves on") {
  auto id = partition_id(5, 0);
  auto partition = make_partition(id);
  REQUIRE(partition->emit_record(make_record(1, 100), 0) == emit_result::written);
  partition->finish();
  // Wrong arity, then wrong element types: both are counted and dropped, nothing is read.
  caf::anon_send(server, partition_request_atom::value, wire_u32{1});
  caf::anon_send(server, partition_request_atom::value, server, wire_u32{0}, wire_u32{0},
                 wire_u32{0}, wire_u32{0}, wire_u32{0}, wire_u32{0}, wire_u32{0}, wire_u32{0},
                 wire_u32{0});
  sched.run();
  CHECK(stats->malformed_messages == 2);
  CHECK(stats->requests == 0);
  CHECK(stats->active_readers == 0);
  consumer_side side{config, id, 0};
  std::size_t records = 0;
  side.on_record = [&](std::span<const char>) { ++records; };
  start_consumer(side);
  sched.run();
  REQUIRE_FALSE(side.failure);
  CHECK(side.ended);
  CHECK(records == 1);
  CHECK(stats->requests == 1);
}
