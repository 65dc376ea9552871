// A task's inputs align checkpoint barriers across all their gates and channels (local channels:
// no actors needed).

#include <doctest/doctest.h>

#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "network_test_util.hpp"
#include "runtime/network/record_deserializer.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/task_inputs.hpp"

namespace flint::network {

namespace {

const graph::job_id job{0x5, 0x6};

/// A consumer of two gates: gate 0 reads producers a0 and a1 (result 1), gate 1 reads b0
/// (result 2); every producer has one subpartition and runs in this process.
struct two_gate_fixture {
  std::shared_ptr<shuffle_environment> shuffle = [] {
    network_config config;
    config.segment_size = 1024;
    config.network_memory = 64 * 1024;
    return std::make_shared<shuffle_environment>(config);
  }();
  std::shared_ptr<result_partition> a0, a1, b0;
  std::unique_ptr<task_inputs> inputs;
  int woken = 0;

  two_gate_fixture() {
    a0 = *shuffle->create_partition(job, test::partition_id(1, 0), 1);
    a1 = *shuffle->create_partition(job, test::partition_id(1, 1), 1);
    b0 = *shuffle->create_partition(job, test::partition_id(2, 0), 1);
    graph::task_deployment_descriptor tdd;
    tdd.job_id = job;
    tdd.task_name = "Consumer (1/1)";
    graph::input_gate_deployment_descriptor gate_a;
    gate_a.consumed_result_id = graph::intermediate_data_set_id{0, 1};
    gate_a.partition_numbers = {0, 1};
    graph::input_gate_deployment_descriptor gate_b;
    gate_b.consumed_result_id = graph::intermediate_data_set_id{0, 2};
    gate_b.partition_numbers = {0};
    tdd.input_gates = {gate_a, gate_b};
    auto created = shuffle->create_inputs(
      tdd, input_owner{"Consumer (1/1)", [this] { ++woken; }, nullptr, nullptr});
    REQUIRE_MESSAGE(created.has_value(), created.error().to_string());
    inputs = std::move(*created);
    REQUIRE(inputs->request_partitions());
  }

  ~two_gate_fixture() {
    inputs->release();
    shuffle->release_all();
  }

  static void emit(result_partition& p, const std::string& record) {
    REQUIRE(p.emit_record(record, 0) == emit_result::written);
    p.flush_all();
  }

  /// What the task reads now: records as "gate/channel:record", aligned barriers as "barrier n".
  std::vector<std::string> read() {
    std::vector<std::string> out;
    while (auto next = inputs->poll_next()) {
      if (auto b = barrier_of(next->data.buf)) {
        out.push_back("barrier " + std::to_string(b->id));
        continue;
      }
      if (next->data.is_event())
        continue;
      record_deserializer d;
      d.set_next_buffer(std::move(next->data.buf));
      std::span<const char> r;
      while (d.next_record(r) == deserialization_result::record)
        out.push_back(std::to_string(next->gate) + "/" + std::to_string(next->data.channel) + ":"
                      + std::string(r.begin(), r.end()));
    }
    return out;
  }
};

} // namespace

TEST_SUITE("task inputs") {
  TEST_CASE_FIXTURE(
    two_gate_fixture,
    "a channel that delivered barrier n is held until every channel of every gate did") {
    emit(*a0, "a0-before");
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 100}));
    emit(*a0, "a0-after");
    emit(*a1, "a1-before");
    emit(*b0, "b0-before");
    auto first = read();
    // a0's record after the barrier waits; the others flow.
    CHECK(first == std::vector<std::string>{"0/0:a0-before", "1/0:b0-before", "0/1:a1-before"});
    CHECK(inputs->is_blocked(0, 0));
    REQUIRE(b0->broadcast_checkpoint_barrier({1, 100}));
    emit(*b0, "b0-after");
    CHECK(read().empty());
    CHECK(inputs->is_blocked(1, 0));
    REQUIRE(a1->broadcast_checkpoint_barrier({1, 100}));
    auto aligned = read();
    // The task sees barrier 1 once, before any record written after it.
    REQUIRE_FALSE(aligned.empty());
    CHECK(aligned.front() == "barrier 1");
    CHECK(std::count(aligned.begin(), aligned.end(), "barrier 1") == 1);
    std::sort(aligned.begin() + 1, aligned.end());
    CHECK(aligned == std::vector<std::string>{"barrier 1", "0/0:a0-after", "1/0:b0-after"});
    CHECK_FALSE(inputs->is_blocked(0, 0));
    CHECK_FALSE(inputs->is_blocked(1, 0));
    CHECK(inputs->take_aborted_checkpoints().empty());
  }

  TEST_CASE_FIXTURE(
    two_gate_fixture,
    "a newer barrier overtaking an alignment releases its channels and the older checkpoint is given up") {
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 100}));
    emit(*a0, "a0-after-1");
    CHECK(read().empty());
    REQUIRE(a1->broadcast_checkpoint_barrier({2, 200}));
    auto got = read();
    CHECK(got == std::vector<std::string>{"0/0:a0-after-1"});
    CHECK(inputs->take_aborted_checkpoints() == std::vector<std::int64_t>{1});
    CHECK(inputs->is_blocked(0, 1));
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "a producer that ends completes an alignment the others finished") {
    REQUIRE(a0->broadcast_checkpoint_barrier({3, 300}));
    REQUIRE(a1->broadcast_checkpoint_barrier({3, 300}));
    CHECK(read().empty());
    b0->finish();
    auto got = read();
    CHECK(got == std::vector<std::string>{"barrier 3"});
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "a producer that ended before any barrier does not hold a later alignment") {
    b0->finish();
    CHECK(read().empty());
    REQUIRE(a0->broadcast_checkpoint_barrier({4, 400}));
    REQUIRE(a1->broadcast_checkpoint_barrier({4, 400}));
    CHECK(read() == std::vector<std::string>{"barrier 4"});
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "an aborted checkpoint releases the channels held for its alignment") {
    REQUIRE(a0->broadcast_checkpoint_barrier({5, 500}));
    emit(*a0, "a0-after");
    emit(*b0, "b0");
    CHECK(read() == std::vector<std::string>{"1/0:b0"}); // a0 is held
    CHECK(inputs->is_blocked(0, 0));
    inputs->cancel_checkpoint(5);
    CHECK_FALSE(inputs->is_blocked(0, 0));
    CHECK(read() == std::vector<std::string>{"0/0:a0-after"});
    CHECK_FALSE(inputs->has_aborted_checkpoints()); // the JobMaster aborted it: nothing to decline
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "at-least-once holds no channel and passes barrier n once all delivered it") {
    inputs->set_at_least_once(true);
    REQUIRE(a0->broadcast_checkpoint_barrier({6, 600}));
    emit(*a0, "a0-after");
    CHECK(read() == std::vector<std::string>{"0/0:a0-after"}); // not held
    CHECK_FALSE(inputs->is_blocked(0, 0));
    REQUIRE(a1->broadcast_checkpoint_barrier({6, 600}));
    REQUIRE(b0->broadcast_checkpoint_barrier({6, 600}));
    CHECK(read() == std::vector<std::string>{"barrier 6"});
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "an alignment is timed from its first barrier to its last on the manual clock") {
    std::int64_t nanos = 5'000, millis = 1'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    CHECK(inputs->last_alignment().checkpoint_id == -1);
    // Triggered at 997 ms on the JobMaster's clock; the first barrier reads at 1000 ms.
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 997}));
    CHECK(read().empty());
    nanos += 2'500'000;
    emit(*a1, "a1-during"); // read while aligning: 4 bytes of length and 9 of record
    CHECK(read() == std::vector<std::string>{"0/1:a1-during"});
    REQUIRE(a1->broadcast_checkpoint_barrier({1, 997}));
    CHECK(read().empty());
    nanos += 1'500'000;
    millis += 50; // the later barriers do not move the start delay
    REQUIRE(b0->broadcast_checkpoint_barrier({1, 997}));
    CHECK(read() == std::vector<std::string>{"barrier 1"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{1, 3'000'000, 4'000'000, 13});
    // After the alignment nothing more counts.
    emit(*b0, "b0-after");
    CHECK(read() == std::vector<std::string>{"1/0:b0-after"});
    CHECK(inputs->last_alignment().bytes_processed == 13);
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "an overtaken alignment is not reported; the newer one is timed from its own barrier") {
    std::int64_t nanos = 0, millis = 2'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 1'990}));
    CHECK(read().empty());
    nanos = 7'000;
    REQUIRE(a1->broadcast_checkpoint_barrier({2, 1'999}));
    CHECK(read().empty());
    CHECK(inputs->take_aborted_checkpoints() == std::vector<std::int64_t>{1});
    nanos = 10'000;
    REQUIRE(a0->broadcast_checkpoint_barrier({2, 1'999}));
    REQUIRE(b0->broadcast_checkpoint_barrier({2, 1'999}));
    CHECK(read() == std::vector<std::string>{"barrier 2"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{2, 1'000'000, 3'000, 0});
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "a barrier stamped after the reader's clock has no negative start delay") {
    std::int64_t nanos = 0, millis = 100;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    b0->finish();
    a1->finish();
    CHECK(read().empty());
    // One live channel: the barrier aligns nothing.
    REQUIRE(a0->broadcast_checkpoint_barrier({3, 150}));
    CHECK(read() == std::vector<std::string>{"barrier 3"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{3, 0, 0, 0});
  }

  TEST_CASE_FIXTURE(two_gate_fixture,
                    "a barrier stamped absurdly far in the past saturates the start delay") {
    std::int64_t nanos = 0, millis = 1'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    b0->finish();
    a1->finish();
    CHECK(read().empty());
    // A peer's timestamp: the delay in ns does not fit 64 bits (it overflowed to a negative).
    REQUIRE(a0->broadcast_checkpoint_barrier({3, -10'000'000'000'000}));
    CHECK(read() == std::vector<std::string>{"barrier 3"});
    CHECK(inputs->last_alignment().start_delay_nanos == std::numeric_limits<std::int64_t>::max());
  }

  TEST_CASE_FIXTURE(two_gate_fixture, "at least once: cancelling a newer checkpoint leaves the "
                                      "alignment of an older one in progress measured") {
    inputs->set_at_least_once(true);
    std::int64_t nanos = 0, millis = 1'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 990}));
    CHECK(read().empty());
    nanos = 1'000;
    // The JobMaster gave up checkpoint 2 (declined elsewhere); 1 is still tracked here.
    inputs->cancel_checkpoint(2);
    emit(*a1, "a1-during");
    CHECK(read().size() == 1);
    nanos = 5'000;
    REQUIRE(a1->broadcast_checkpoint_barrier({1, 990}));
    REQUIRE(b0->broadcast_checkpoint_barrier({1, 990}));
    CHECK(read() == std::vector<std::string>{"barrier 1"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{1, 10'000'000, 5'000, 13});
  }

  TEST_CASE_FIXTURE(two_gate_fixture, "at least once: a checkpoint whose measurement a newer one "
                                      "took over reports zeros, as Flink's tracker") {
    inputs->set_at_least_once(true);
    std::int64_t nanos = 0, millis = 1'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 990}));
    REQUIRE(a0->broadcast_checkpoint_barrier({2, 995}));
    CHECK(read().empty());
    nanos = 100;
    REQUIRE(a1->broadcast_checkpoint_barrier({1, 990}));
    REQUIRE(b0->broadcast_checkpoint_barrier({1, 990}));
    CHECK(read() == std::vector<std::string>{"barrier 1"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{1, 0, 0, 0});
    // Checkpoint 2's measurement went on.
    nanos = 400;
    REQUIRE(a1->broadcast_checkpoint_barrier({2, 995}));
    REQUIRE(b0->broadcast_checkpoint_barrier({2, 995}));
    CHECK(read() == std::vector<std::string>{"barrier 2"});
    CHECK(inputs->last_alignment() == checkpoint_alignment{2, 5'000'000, 400, 0});
  }

  TEST_CASE_FIXTURE(two_gate_fixture, "the alignment in progress is published for the gauge and "
                                      "withdrawn when it ends or is given up") {
    std::int64_t nanos = 500, millis = 1'000;
    inputs->set_clock({[&] { return nanos; }, [&] { return millis; }});
    auto started = std::make_shared<std::atomic<std::int64_t>>(0);
    inputs->set_alignment_started_gauge(started);
    REQUIRE(a0->broadcast_checkpoint_barrier({1, 990}));
    CHECK(read().empty());
    CHECK(started->load() == 500);
    nanos = 900;
    REQUIRE(a1->broadcast_checkpoint_barrier({1, 990}));
    REQUIRE(b0->broadcast_checkpoint_barrier({1, 990}));
    CHECK(read() == std::vector<std::string>{"barrier 1"});
    CHECK(started->load() == 0);
    nanos = 1'200;
    REQUIRE(a0->broadcast_checkpoint_barrier({2, 995}));
    CHECK(read().empty());
    CHECK(started->load() == 1'200);
    inputs->cancel_checkpoint(2);
    CHECK(started->load() == 0);
  }

} // TEST_SUITE

} // namespace flint::network
