// flint-test-transport-peer <records>: the producer process of the cross-process transport test.
// It registers partition (data set 0000…0009/0000…0001, #0) with one subpartition, serves it
// through a partition request server published as "partition_server" on 127.0.0.1 at a free
// port, prints "port=<n>", writes <records> records (make_record(i, record_size(i))) from a writer
// thread that waits under backpressure, and serves until its standard input closes.

#include "transport_test_util.hpp"

#include "runtime/actors/rpc/rpc_service.hpp"
#include "runtime/network/shuffle_environment.hpp"
#include "runtime/network/transport/partition_request_server.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

namespace {

using flint::network::transport::test::record_size;

/// Emits a record, waiting for the pool while the partition is backpressured; false on `stop`.
bool emit_blocking(flint::network::result_partition& p, const std::string& record,
                   const std::atomic<bool>& stop) {
  using flint::network::emit_result;
  auto r = p.emit_record(record, 0);
  while (r == emit_result::blocked) {
    // Shared: the pool may run the callback after this frame gave up waiting.
    struct waiter {
      std::mutex m;
      std::condition_variable cv;
      bool ready = false;
    };
    auto w = std::make_shared<waiter>();
    auto registered = p.notify_when_available([w] {
      std::lock_guard<std::mutex> g{w->m};
      w->ready = true;
      w->cv.notify_one();
    });
    if (registered) {
      std::unique_lock<std::mutex> lock{w->m};
      while (!w->ready)
        if (!w->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return w->ready; }) && stop)
          return false;
    }
    r = p.resume();
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: flint-test-transport-peer <records>\n");
    return 2;
  }
  auto n = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
  flint::network::shuffle_environment env{flint::network::network_config{}};
  const flint::graph::job_id job{9, 9};
  flint::network::result_partition_id id{flint::graph::intermediate_data_set_id{9, 1}, 0};
  auto partition = env.create_partition(job, id, 1);
  if (!partition) {
    std::fprintf(stderr, "%s\n", partition.error().to_string().c_str());
    return 1;
  }
  caf::actor_system_config cfg;
  flint::rpc::configure_node(cfg, {});
  caf::actor_system sys{cfg};
  auto server =
    flint::network::transport::spawn_partition_request_server(sys, *env.partitions_of(job));
  auto locator = flint::rpc::spawn_endpoint_locator(sys);
  flint::rpc::register_endpoint(locator, "partition_server", server);
  auto port = flint::rpc::publish_locator(sys, locator, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "%s\n", port.error().to_string().c_str());
    return 1;
  }
  std::printf("port=%u\n", static_cast<unsigned>(*port));
  std::fflush(stdout);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto& p = **partition;
    for (std::size_t i = 0; i < n; ++i)
      if (!emit_blocking(p, flint::network::transport::test::make_record(i, record_size(i)), stop))
        return;
    p.finish();
  });
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(locator, caf::exit_reason::user_shutdown);
  // A writer still blocked on a consumer that left gives up before the partition goes.
  stop = true;
  writer.join();
  env.release_all();
  return 0;
}
