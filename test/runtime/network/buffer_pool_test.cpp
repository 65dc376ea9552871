#include "network_test_util.hpp"

#include "runtime/network/buffer.hpp"
#include "runtime/network/buffer_listener.hpp"
#include "runtime/network/local_buffer_pool.hpp"
#include "runtime/network/network_buffer_pool.hpp"
#include "runtime/network/network_config.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace flint;
using namespace flint::network;

TEST_CASE("a released buffer returns to its local pool") {
  auto global = network_buffer_pool::make(10, 64);
  auto pool = global->create_buffer_pool(2, 4);
  REQUIRE(pool);
  auto local = *pool;
  CHECK(global->allocated_segments() == 0); // nothing is allocated before first use

  std::vector<buffer> held;
  for (int i = 0; i < 4; ++i) {
    auto b = local->request_buffer();
    REQUIRE(b);
    CHECK(b->capacity() == 64);
    CHECK(b->recycler() == local.get());
    held.push_back(std::move(*b));
  }
  CHECK(local->num_in_use() == 4);
  CHECK(global->available_segments() == 6);

  held.pop_back();
  CHECK(local->num_in_use() == 3);
  CHECK(local->num_available() == 1);
  // Kept by the local pool for reuse, not given back to the global one.
  CHECK(global->available_segments() == 6);
  held.clear();
  CHECK(local->num_in_use() == 0);
}

TEST_CASE("pool exhaustion reports unavailability and notifies when a buffer comes back") {
  auto global = network_buffer_pool::make(10, 64);
  auto local = *global->create_buffer_pool(1, 2);
  auto a = local->request_buffer();
  auto b = local->request_buffer();
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(local->request_buffer());
  CHECK_FALSE(local->is_available());

  int woken = 0;
  CHECK(local->notify_when_available([&] { ++woken; }));
  CHECK(woken == 0);
  a->release();
  CHECK(woken == 1);
  CHECK(local->is_available());
  // One-shot: a second release does not run it again.
  b->release();
  CHECK(woken == 1);
  CHECK(local->request_buffer());
  // Available now: nothing is registered and the caller retries at once.
  CHECK_FALSE(local->notify_when_available([&] { ++woken; }));
}

TEST_CASE("a pool that wakes for half waits until half of the returnable buffers are back") {
  auto global = network_buffer_pool::make(20, 64);
  auto local = *global->create_buffer_pool(2, 10);
  // The owner may keep one buffer while it waits: 9 can come back, the wake-up needs 4.
  local->wake_for_half(1);
  std::vector<buffer> out;
  while (auto next = local->request_buffer())
    out.push_back(std::move(*next));
  REQUIRE(out.size() == 10);
  int woken = 0;
  CHECK_FALSE(local->has_waiters());
  CHECK(local->notify_when_available([&] { ++woken; }));
  for (int i = 0; i < 3; ++i) {
    out.back().release();
    out.pop_back();
  }
  CHECK(woken == 0);
  CHECK(local->num_available() == 3);
  // Buffers are back, but the owner still waits (the partition request server reads this).
  CHECK(local->is_available());
  CHECK(local->has_waiters());
  out.back().release();
  out.pop_back();
  CHECK(woken == 1);
  CHECK_FALSE(local->has_waiters());
  // A buffer is there: nothing to wait for.
  CHECK_FALSE(local->notify_when_available([&] { ++woken; }));
}

TEST_CASE("a pool that wakes for half still wakes when its segments go to a starving pool") {
  auto global = network_buffer_pool::make(4, 64);
  auto a = *global->create_buffer_pool(1, 4);
  auto b = *global->create_buffer_pool(0, 4);
  a->wake_for_half(0);
  std::vector<buffer> held;
  while (auto next = a->request_buffer())
    held.push_back(std::move(*next));
  REQUIRE(held.size() == 4);
  int a_woken = 0;
  CHECK(a->notify_when_available([&] { ++a_woken; }));
  // One back of four: a waits for two.
  held.pop_back();
  CHECK(a->num_available() == 1);
  CHECK(a_woken == 0);
  // Now b starves: the next segment goes to it, a holds three and one free is half enough.
  int b_woken = 0;
  CHECK(b->notify_when_available([&] { ++b_woken; }));
  held.pop_back();
  CHECK(b_woken == 1);
  CHECK(a->num_requested() == 3);
  CHECK(a_woken == 1);
}

TEST_CASE("moving a buffer moves ownership: only the last owner recycles") {
  auto global = network_buffer_pool::make(4, 64);
  auto local = *global->create_buffer_pool(1, 1);
  auto b = local->request_buffer();
  REQUIRE(b);
  const char* data = b->data();
  buffer moved = std::move(*b);
  CHECK_FALSE(static_cast<bool>(*b));
  CHECK(moved.data() == data);
  CHECK(local->num_in_use() == 1);
  b.reset();
  CHECK(local->num_in_use() == 1);
  moved = buffer{};
  CHECK(local->num_in_use() == 0);
  CHECK(local->num_available() == 1);
}

TEST_CASE("the global pool guarantees every local pool its minimum") {
  auto global = network_buffer_pool::make(4, 64);
  auto a = *global->create_buffer_pool(1, 4);
  auto b = *global->create_buffer_pool(2, 2);

  std::vector<buffer> held;
  while (auto next = a->request_buffer())
    held.push_back(std::move(*next));
  // a may borrow only what b's unmet minimum leaves free.
  CHECK(held.size() == 2);
  auto b1 = b->request_buffer();
  auto b2 = b->request_buffer();
  CHECK(b1);
  CHECK(b2);
  CHECK_FALSE(b->request_buffer());

  auto too_much = global->create_buffer_pool(2, 2);
  REQUIRE_FALSE(too_much);
  CHECK(too_much.error().code == errc::rejected);
  CHECK(too_much.error().message.find("insufficient number of network buffers")
        != std::string::npos);
}

TEST_CASE("a pool above its minimum gives segments back while another pool waits") {
  auto global = network_buffer_pool::make(3, 64);
  auto a = *global->create_buffer_pool(1, 3);
  auto b = *global->create_buffer_pool(0, 3);
  std::vector<buffer> held;
  while (auto next = a->request_buffer())
    held.push_back(std::move(*next));
  CHECK(held.size() == 3);
  CHECK_FALSE(b->request_buffer());
  int woken = 0;
  CHECK(b->notify_when_available([&] { ++woken; }));
  held.pop_back();
  CHECK(woken == 1);
  CHECK(a->num_requested() == 2);
  CHECK(b->request_buffer());
}

namespace {

struct recording_listener : buffer_listener {
  std::vector<buffer> taken;
  std::size_t wanted = 1;
  buffer_listener_result notify_buffer_available(buffer& offered) override {
    taken.push_back(std::move(offered));
    return taken.size() < wanted ? buffer_listener_result::used_need_more
                                 : buffer_listener_result::used_no_need_more;
  }
};

} // namespace

TEST_CASE("a buffer listener is handed the next recycled buffer directly") {
  auto global = network_buffer_pool::make(4, 64);
  auto local = *global->create_buffer_pool(0, 1);
  auto only = local->request_buffer();
  REQUIRE(only);
  auto listener = std::make_shared<recording_listener>();
  CHECK(local->add_buffer_listener(listener));
  only->release();
  REQUIRE(listener->taken.size() == 1);
  CHECK(listener->taken[0].recycler() == local.get());
  CHECK(local->num_available() == 0);
  listener->taken.clear();
  // It needed no more, so the next recycle stays in the pool.
  CHECK(local->num_available() == 1);
}

TEST_CASE("a destroyed pool hands its segments back, in-flight ones when released") {
  auto global = network_buffer_pool::make(4, 64);
  auto local = *global->create_buffer_pool(2, 4);
  auto a = local->request_buffer();
  auto b = local->request_buffer();
  b->release();
  CHECK(global->available_segments() == 2);
  local->destroy();
  CHECK(global->available_segments() == 3);
  CHECK(global->required_segments() == 0);
  CHECK_FALSE(local->request_buffer());
  a->release();
  CHECK(global->available_segments() == 4);
}

TEST_CASE("exclusive segments count against the total and come back") {
  auto global = network_buffer_pool::make(4, 64);
  auto segments = global->request_segments(3);
  REQUIRE(segments);
  CHECK(segments->size() == 3);
  auto more = global->request_segments(2);
  REQUIRE_FALSE(more);
  CHECK(more.error().code == errc::rejected);
  global->recycle_segments(std::move(*segments));
  CHECK(global->available_segments() == 4);
  CHECK(global->required_segments() == 0);
}

TEST_CASE("network config reads Flink's keys") {
  auto defaults = network_config{};
  CHECK(defaults.segment_size == 32 * 1024);
  CHECK(defaults.buffers_per_channel == 2);
  CHECK(defaults.floating_buffers_per_gate == 8);
  CHECK(defaults.buffer_timeout == std::chrono::milliseconds(100));

  auto config =
    network_config::from_map({{"taskmanager.memory.segment-size", "16kb"},
                              {"taskmanager.memory.network.max", "8 mb"},
                              {"taskmanager.network.memory.buffers-per-channel", "4"},
                              {"taskmanager.network.memory.floating-buffers-per-gate", "16"},
                              {"execution.buffer-timeout", "5 s"},
                              {"taskmanager.network.request-backoff.initial", "50ms"},
                              {"taskmanager.network.request-backoff.max", "1 min"},
                              {"unrelated.key", "x"}});
  REQUIRE(config);
  CHECK(config->segment_size == 16 * 1024);
  CHECK(config->num_segments() == 512);
  CHECK(config->buffers_per_channel == 4);
  CHECK(config->floating_buffers_per_gate == 16);
  CHECK(config->buffer_timeout == std::chrono::milliseconds(5000));
  CHECK(config->request_backoff_initial == std::chrono::milliseconds(50));
  CHECK(config->request_backoff_max == std::chrono::milliseconds(60000));
  CHECK(config->partition_pool_min(3) == 4);
  CHECK(config->partition_pool_max(3) == 3 * 4 + 16);

  auto bad = network_config::from_map({{"execution.buffer-timeout", "soon"}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == errc::invalid_argument);
  CHECK(bad.error().message.find("execution.buffer-timeout") != std::string::npos);
}

TEST_CASE("an unpooled copy owns its bytes and frees them on release") {
  std::string bytes = "some received bytes";
  auto copy = buffer::unpooled_copy(bytes);
  bytes.assign(bytes.size(), 'x');
  CHECK(copy.recycler() == nullptr);
  CHECK(copy.is_data());
  CHECK(std::string(copy.bytes().begin(), copy.bytes().end()) == "some received bytes");
  auto end = buffer::unpooled_copy({}, buffer_kind::end_of_partition);
  CHECK(static_cast<bool>(end));
  CHECK_FALSE(end.is_data());
  CHECK(end.size() == 0);
  CHECK(std::string(to_string(end.kind())) == "end_of_partition");
}
