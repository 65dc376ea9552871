// Barrier alignment (exactly-once) and tracking (at-least-once), event by event.

#include <doctest/doctest.h>

#include <vector>

#include "runtime/network/checkpoint_barrier_handler.hpp"

namespace flint::network {

namespace {

checkpoint_barrier barrier(std::int64_t id) {
  return {id, 1000 + id};
}

} // namespace

TEST_SUITE("checkpoint barriers") {
  TEST_CASE("alignment holds a channel that delivered barrier n until its peers deliver it") {
    barrier_aligner a(3);
    auto first = a.on_barrier(1, barrier(1));
    CHECK(first.block_channel);
    CHECK_FALSE(first.trigger.has_value());
    CHECK(a.is_blocked(1));
    CHECK(a.aligning() == 1);
    auto second = a.on_barrier(0, barrier(1));
    CHECK(second.block_channel);
    CHECK(a.number_of_blocked() == 2);
    CHECK_FALSE(a.is_blocked(2));
    auto last = a.on_barrier(2, barrier(1));
    CHECK_FALSE(last.block_channel);
    REQUIRE(last.trigger.has_value());
    CHECK(*last.trigger == barrier(1));
    CHECK(last.release == std::vector<std::size_t>{0, 1, 2});
    CHECK(a.number_of_blocked() == 0);
    CHECK_FALSE(a.aligning().has_value());
    // The next checkpoint aligns the same way.
    a.on_barrier(2, barrier(2));
    a.on_barrier(0, barrier(2));
    CHECK(a.on_barrier(1, barrier(2)).trigger == barrier(2));
  }

  TEST_CASE("a single channel triggers at once") {
    barrier_aligner a(1);
    auto d = a.on_barrier(0, barrier(5));
    CHECK(d.trigger == barrier(5));
    CHECK_FALSE(d.block_channel);
    CHECK(d.release == std::vector<std::size_t>{0});
  }

  TEST_CASE(
    "a cancelled checkpoint releases every held channel and its late barriers are ignored") {
    barrier_aligner a(3);
    a.on_barrier(0, barrier(1));
    a.on_barrier(2, barrier(1));
    auto c = a.on_cancellation(1);
    CHECK(c.aborted == 1);
    CHECK(c.release == std::vector<std::size_t>{0, 2});
    CHECK(a.number_of_blocked() == 0);
    auto late = a.on_barrier(1, barrier(1));
    CHECK_FALSE(late.block_channel);
    CHECK_FALSE(late.trigger.has_value());
    // A cancellation that arrives before any of its barriers makes them late as well.
    CHECK_FALSE(a.on_cancellation(2).aborted.has_value());
    CHECK_FALSE(a.on_barrier(0, barrier(2)).block_channel);
    // A cancellation of a newer checkpoint ends an older alignment too.
    a.on_barrier(0, barrier(3));
    auto newer = a.on_cancellation(4);
    CHECK(newer.aborted == 3);
    CHECK(newer.release == std::vector<std::size_t>{0});
  }

  TEST_CASE("a newer barrier overtaking an alignment aborts it and starts its own") {
    barrier_aligner a(2);
    a.on_barrier(0, barrier(1));
    auto d = a.on_barrier(1, barrier(2));
    CHECK(d.aborted == 1);
    CHECK(d.release == std::vector<std::size_t>{0});
    CHECK(d.block_channel);
    CHECK(a.aligning() == 2);
    CHECK(a.is_blocked(1));
    CHECK_FALSE(a.is_blocked(0));
    // Barrier 1 arriving on channel 0 now is late.
    CHECK_FALSE(a.on_barrier(0, barrier(1)).block_channel);
    CHECK(a.on_barrier(0, barrier(2)).trigger == barrier(2));
  }

  TEST_CASE("an ended channel no longer takes part and may complete an alignment") {
    barrier_aligner a(3);
    a.on_barrier(0, barrier(1));
    a.on_barrier(1, barrier(1));
    auto d = a.on_end_of_partition(2);
    CHECK(d.trigger == barrier(1));
    CHECK(d.release == std::vector<std::size_t>{0, 1});
    // From now on two channels are enough.
    a.on_barrier(1, barrier(2));
    CHECK(a.on_barrier(0, barrier(2)).trigger == barrier(2));
    CHECK_FALSE(a.on_barrier(2, barrier(3)).block_channel); // an ended channel has no barriers
  }

  TEST_CASE("at-least-once tracking holds nothing and triggers when every channel delivered n") {
    barrier_tracker t(3);
    auto first = t.on_barrier(0, barrier(1));
    CHECK_FALSE(first.block_channel);
    CHECK_FALSE(first.trigger.has_value());
    CHECK_FALSE(t.on_barrier(2, barrier(1)).trigger.has_value());
    // Barrier 2 may arrive on a channel before barrier 1 came on all of them.
    CHECK_FALSE(t.on_barrier(0, barrier(2)).trigger.has_value());
    auto done = t.on_barrier(1, barrier(1));
    CHECK(done.trigger == barrier(1));
    CHECK(done.release.empty());
    t.on_barrier(1, barrier(2));
    CHECK(t.on_barrier(2, barrier(2)).trigger == barrier(2));
  }

  TEST_CASE(
    "at-least-once: a newer complete checkpoint drops older ones, a cancelled one is forgotten") {
    barrier_tracker t(2);
    t.on_barrier(0, barrier(1));
    t.on_barrier(0, barrier(2));
    auto d = t.on_barrier(1, barrier(2));
    CHECK(d.trigger == barrier(2));
    CHECK(d.aborted == 1);
    CHECK_FALSE(t.on_barrier(1, barrier(1)).trigger.has_value()); // late now
    t.on_barrier(0, barrier(3));
    CHECK(t.on_cancellation(3).aborted == 3);
    CHECK_FALSE(t.on_barrier(1, barrier(3)).trigger.has_value());
    t.on_barrier(0, barrier(4));
    CHECK(t.on_end_of_partition(1).trigger == barrier(4));
  }

  TEST_CASE("bad channel numbers are ignored") {
    barrier_aligner a(2);
    CHECK_FALSE(a.on_barrier(7, barrier(1)).block_channel);
    CHECK_FALSE(a.on_end_of_partition(7).trigger.has_value());
    barrier_tracker t(2);
    CHECK_FALSE(t.on_barrier(7, barrier(1)).trigger.has_value());
  }

} // TEST_SUITE

} // namespace flint::network
