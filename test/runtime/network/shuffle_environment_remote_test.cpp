// Remote channels of the shuffle environment: contract C's locality rule and the connection
// cache, and a partition of one actor system read from another over CAF's middleman and loopback.

#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/transport/connection_cache.hpp"
#include "test/runtime/network/transport/transport_test_util.hpp"

#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace flint;
using namespace std::chrono_literals;

TEST_CASE("a channel is local when its producer has this process's data address or none") {
  network::transport::connection_cache remote("10.0.0.1", 6121, caf::actor{}, nullptr);
  CHECK(remote.is_local(graph::producer_location{}));
  CHECK(remote.is_local(graph::producer_location{"tm-x", "10.0.0.2", 0}));
  CHECK(remote.is_local(graph::producer_location{"tm-1", "10.0.0.1", 6121}));
  CHECK_FALSE(remote.is_local(graph::producer_location{"tm-2", "10.0.0.1", 6122}));
  CHECK_FALSE(remote.is_local(graph::producer_location{"tm-3", "10.0.0.2", 6121}));
  // Reaching a peer without a connector fails clearly, naming the producer.
  auto server = remote.server_of(graph::producer_location{"tm-2", "10.0.0.1", 6122});
  REQUIRE_FALSE(server.has_value());
  CHECK(server.error().code == errc::unreachable);
}

TEST_CASE(
  "enable_remote_channels: a partition of system A is read from system B over the middleman") {
  auto make_config = [](caf::actor_system_config& cfg) -> caf::actor_system_config& {
    cfg.load<caf::io::middleman>();
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    cfg.set("logger.console", caf::atom("none"));
    return cfg;
  };
  caf::actor_system_config cfg_a, cfg_b;
  caf::actor_system sys_a{make_config(cfg_a)};
  caf::actor_system sys_b{make_config(cfg_b)};
  auto shuffle_a = std::make_shared<network::shuffle_environment>();
  auto shuffle_b = std::make_shared<network::shuffle_environment>();
  auto& env_a = *shuffle_a;
  auto& env_b = *shuffle_b;
  auto port_a = env_a.enable_remote_channels(sys_a, "127.0.0.1", 0, "127.0.0.1");
  REQUIRE_MESSAGE(port_a.has_value(), port_a.error().to_string());
  auto port_b = env_b.enable_remote_channels(sys_b, "127.0.0.1", 0, "127.0.0.1");
  REQUIRE(port_b.has_value());
  CHECK(*port_a != 0);
  CHECK(*port_a != *port_b);
  CHECK(env_a.data_port() == *port_a);
  // Twice is refused.
  CHECK_FALSE(env_a.enable_remote_channels(sys_a, "127.0.0.1", 0, "127.0.0.1").has_value());

  graph::job_id job{0xab, 0xcd};
  network::result_partition_id id{graph::intermediate_data_set_id{5, 6}, 0};
  auto partition = env_a.create_partition(job, id, 1);
  REQUIRE(partition.has_value());
  const std::size_t n = 2000;
  // The producer writes from its own thread, blocked whenever its pool (10 buffers) is full until
  // the consumer's credit lets the server send more.
  std::thread writer([&] {
    auto& p = **partition;
    for (std::size_t i = 0; i < n; ++i) {
      auto r = p.emit_record(network::transport::test::make_record(i, 1 + (i * 37) % 3000), 0);
      for (int wait = 0; r == network::emit_result::blocked && wait < 30000; ++wait) {
        std::this_thread::sleep_for(1ms);
        if (p.is_available())
          r = p.resume();
      }
    }
    p.finish();
    env_a.producer_finished(job, id);
  });

  // System B's consumer asks for A's server as a task of B would: by A's data address.
  auto server =
    env_b.connections()->server_of(graph::producer_location{"tm-a", "127.0.0.1", *port_a});
  REQUIRE_MESSAGE(server.has_value(), server.error().to_string());
  CHECK(env_b.connections()->num_connections() == 1);
  CHECK(env_b.connections()
          ->server_of(graph::producer_location{"tm-a", "127.0.0.1", *port_a})
          .has_value());
  CHECK(env_b.connections()->num_connections() == 1);

  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  std::vector<std::string> received;
  network::transport::test::consumer_side side{env_b.config(), id, 0, job};
  side.on_record = [&](std::span<const char> r) { received.emplace_back(r.begin(), r.end()); };
  side.on_done = [&] {
    std::lock_guard<std::mutex> guard{mutex};
    done = true;
    changed.notify_all();
  };
  auto consumer = network::transport::test::spawn_consumer(sys_b, side, *server);
  bool finished_in_time = false;
  {
    std::unique_lock<std::mutex> lock{mutex};
    finished_in_time = changed.wait_for(lock, 60s, [&] { return done; });
  }
  writer.join();
  REQUIRE(finished_in_time);
  REQUIRE_FALSE(side.failure);
  CHECK(side.ended);
  REQUIRE(received.size() == n);
  for (std::size_t i = 0; i < n; ++i)
    REQUIRE(received[i] == network::transport::test::make_record(i, 1 + (i * 37) % 3000));
  // A's server counted the subpartition consumed: the partition is released in A.
  for (int i = 0; i < 3000 && env_a.num_partitions() != 0; ++i)
    std::this_thread::sleep_for(10ms);
  CHECK(env_a.num_partitions() == 0);

  caf::anon_send_exit(consumer, caf::exit_reason::user_shutdown);
  env_a.disable_remote_channels();
  env_b.disable_remote_channels();
  CHECK(env_a.data_port() == 0);
}
